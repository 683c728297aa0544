/**
 * `tsx scripts/check-config.ts <file>`: validates a configuration file with the
 * schema the functions use; prints every problem by path and exits 2 when it
 * is wrong. `npm run package` / `npm run deploy` run it on the stage's file, so
 * a wrong file fails before it ships rather than at every cold start.
 */
import { readConfigFile } from '../lib/config/index.js';
import { ValidationError } from '../lib/errors.js';

const file = process.argv[2];
if (!file) {
  console.error('usage: tsx scripts/check-config.ts <configuration file>');
  process.exit(2);
}
try {
  const config = readConfigFile(file);
  console.log(`configuration ${file} is valid: handler ${config.handler}, platform ${config.platform.kind}, ${config.pools.length} pool(s)`);
} catch (error) {
  if (!(error instanceof ValidationError)) throw error;
  console.error(error.message);
  process.exit(2);
}
