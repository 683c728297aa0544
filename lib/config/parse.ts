/**
 * Reading and validating a configuration: the one schema (schema.ts), with
 * every problem listed by path and value, unknown keys named one by one.
 *
 * Runs where configuration files are read: when a stage is packaged
 * (infra/esbuild-plugins.cjs validates the stage's file with it and bundles
 * the result), in the CLI, the local runtime and the tests. A deployed
 * function starts with its packaged configuration instead, and its bundle
 * holds neither this module nor the YAML parser nor the configuration schema
 * (the plugin gives it a stub that refuses NODESCALER_CONFIG and
 * NODESCALER_CONFIG_FILE).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { issuesFromZod, requiredMessage } from '../validation.js';
import type * as z from '../zod.js';
import { configSchema, type Config } from './schema.js';

/** Validate a configuration value (parsed YAML or JSON); throws a `ValidationError` listing every problem. */
export function parseConfig(input: unknown, source = 'configuration'): Config {
  const result = configSchema().safeParse(input, { error: requiredMessage });
  if (result.success) return result.data;
  throw new ValidationError(configIssues(result.error, input), source);
}

/** Read, parse (YAML or JSON) and validate a configuration file. */
export function readConfigFile(path: string): Config {
  const source = `configuration ${path}`;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory, not a file' : `cannot read the file (${code ?? String(error)})`;
    throw new ValidationError({ path: '', message: `${why}: ${resolve(path)}` }, source);
  }
  const value = parseYaml(text, source);
  if (value === null || value === undefined) {
    throw new ValidationError({ path: '', message: `the file is empty: ${resolve(path)}` }, source);
  }
  return parseConfig(value, source);
}


// ---------------------------------------------------------------------------
// Issues: zod reports unknown keys once per object, at the object's path. An
// operator wants the typo itself named (`scaledown`, not `(root)`), with a
// hint when a known key is close, so those become one issue per key.

/** `issuesFromZod`, with each unknown key reported at its own path. */
export function configIssues(error: z.core.$ZodError, input: unknown): ValidationIssue[] {
  const base = issuesFromZod(error, input);
  return error.issues.flatMap((zodIssue, index) => {
    const mapped = base[index]!;
    if (zodIssue.code !== 'unrecognized_keys') return [mapped];
    const parent = zodIssue.path;
    const known = knownKeys(configSchema(), parent);
    const container = valueAt(input, parent);
    return zodIssue.keys.map((key) => {
      const hint = closest(key, known);
      const issue: ValidationIssue = {
        path: [...parent.map(String), key].join('.'),
        message: hint ? `unknown key (did you mean "${hint}"?)` : 'unknown key',
      };
      if (container && Object.prototype.hasOwnProperty.call(container, key)) issue.value = container[key];
      return issue;
    });
  });
}

function valueAt(input: unknown, path: readonly PropertyKey[]): Record<string, unknown> | undefined {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current !== null && typeof current === 'object' ? (current as Record<string, unknown>) : undefined;
}

interface Def {
  type: string;
  shape?: Record<string, { _zod: { def: Def } }>;
  element?: { _zod: { def: Def } };
  innerType?: { _zod: { def: Def } };
  in?: { _zod: { def: Def } };
  valueType?: { _zod: { def: Def } };
}

/** The keys the schema knows at a path (through wrappers, arrays and records). */
export function knownKeys(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  let def = (schema as unknown as { _zod: { def: Def } })._zod.def;
  let rest = [...path];
  for (let guard = 0; guard < 100; guard++) {
    const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
    if (inner) {
      def = inner._zod.def;
      continue;
    }
    if (rest.length === 0) return def.type === 'object' && def.shape ? Object.keys(def.shape) : [];
    const [key, ...tail] = rest;
    rest = tail;
    const next =
      def.type === 'object' ? def.shape?.[String(key)] : def.type === 'array' ? def.element : def.type === 'record' ? def.valueType : undefined;
    if (!next) return [];
    def = next._zod.def;
  }
  return [];
}

/** The known key a typo most likely meant: same letters in another case, or at most two edits away. */
function closest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = name.toLowerCase() === lower ? 0 : editDistance(lower, name.toLowerCase());
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= Math.min(2, Math.floor(key.length / 3)) ? best.name : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The value a YAML (hence JSON) text holds; a syntax error is a `ValidationError` with its line and column. */
function parseYaml(text: string, source: string): unknown {
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
