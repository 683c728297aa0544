// One line on what the reliability suite tried (test/reliability/support/tally.ts writes the figures).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function printReliabilityTally(dir) {
  if (!existsSync(dir)) return;
  const tallies = readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')));
  if (tallies.length === 0) return;
  const sum = (key) => tallies.reduce((total, tally) => total + (tally[key] ?? 0), 0);
  console.log(`reliability: ${sum('scenarios')} generated scenarios, ${sum('malformedInputs')} malformed inputs, ${sum('violations')} invariant violations`);
}
