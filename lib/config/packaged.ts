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
 * file to read, no YAML parser and no configuration schema to build.
 * NODESCALER_CONFIG and NODESCALER_CONFIG_FILE still win over it (lib/config/load.ts).
 */
import type { Config } from './schema.js';

export interface PackagedConfiguration {
  /** The file it was read from, relative to the service directory (for logs and errors). */
  source: string;
  config: Config;
}

export const packagedConfiguration: PackagedConfiguration | undefined = undefined;
