/**
 * The text of a configuration file (YAML, hence JSON too) as a plain value.
 *
 * A module of its own so that the Lambda bundles can leave the YAML parser
 * (about 120 KiB and 20 ms of a cold start) out: a deployed function carries
 * its stage's configuration, read with this module when the stage was packaged
 * (lib/config/packaged.ts), and infra/esbuild-plugins.cjs gives the bundles a
 * JSON-only version of this module.
 */
import { parseDocument } from 'yaml';
import { ValidationError } from '../errors.js';

/** The value a configuration text holds; a syntax error is a `ValidationError` with its line and column. */
export function parseConfigText(text: string, source: string): unknown {
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    throw new ValidationError(
      document.errors.map((error) => {
        const where = error.linePos?.[0];
        const what = (error.message.split('\n')[0] ?? error.message).replace(/ at line \d+, column \d+:?$/, '');
        return { path: '', message: where ? `YAML syntax error at line ${where.line}, column ${where.col}: ${what}` : `YAML syntax error: ${what}` };
      }),
      source,
    );
  }
  return document.toJS();
}
