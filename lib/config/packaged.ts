/**
 * The stage configuration a Lambda bundle carries.
 *
 * In the sources it is `undefined`: tests, `npm start`, `npm run bench` and
 * the CLI read configuration files. When `serverless package` bundles a
 * function, the esbuild plugin `stage-configuration` (infra/esbuild-plugins.cjs)
 * replaces this module with the stage's configuration file (serverless.yml's
 * `configFile` parameter), read and validated by `readConfigFile` at that
 * moment: a wrong file fails the packaging, and a deployed function starts
 * with its configuration already parsed, validated and defaulted, with no
 * file to read and neither YAML parser nor configuration schema in its
 * bundle. It runs that configuration only: NODESCALER_CONFIG and
 * NODESCALER_CONFIG_FILE, which win over it in lib/config/load.ts, fail its
 * cold start (see lib/config/parse.ts).
 */
import type { Config } from './schema.js';

export interface PackagedConfiguration {
  /** The file it was read from, relative to the service directory (for logs and errors). */
  source: string;
  config: Config;
}

export const packagedConfiguration: PackagedConfiguration | undefined = undefined;
