/**
 * Field validators shared by the message kinds. Each rule reports at most one
 * issue per field, with a message that says what the field must be, so an
 * operator reading a dead-lettered message sees one line per problem.
 *
 * Plain functions, not zod: every Lambda function builds the validators of
 * the messages it takes at cold start, and zod's module and schema
 * construction were about a tenth of its load time (docs/BENCHMARKS.md, "Cold start").
 * They behave as the zod schemas they replaced (`z.object` keeps only the
 * keys it knows, in its own order; `z.optional`, `z.array`, `z.literal`,
 * `z.enum`, `z.pipe`), with the same issues in the same order.
 */

/** Where an issue is, from the root of the message: keys and array indexes. */
export type Path = readonly (string | number)[];

export interface Issue {
  path: Path;
  message: string;
}

/**
 * Checks `input` at `path`, adds its issues to `issues`, and returns the
 * output (normalized; meaningless when it added issues).
 */
export type Validator<T> = (input: unknown, path: Path, issues: Issue[]) => T;

export type Output<V> = V extends Validator<infer T> ? T : never;

/** The outcome of validating a whole value. */
export type Validation<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

export function validate<T>(validator: Validator<T>, input: unknown): Validation<T> {
  // Most input is valid: checked first without the paths (a 100-gear list's 600 fields each built one), and only
  // input with issues is checked again to name where they are.
  const quick: Issue[] = [];
  namingPaths = false;
  let value: T;
  try {
    value = validator(input, [], quick);
  } finally {
    namingPaths = true;
  }
  if (quick.length === 0) return { ok: true, value };
  const issues: Issue[] = [];
  validator(input, [], issues);
  return { ok: false, issues };
}

/** False while `validate` checks without building each field's path (`object`, `arrayOf` hand down their own). */
let namingPaths = true;

/** OpenShift districts hand out gear UIDs from a pool of 6000: no node holds more gears. */
export const MAX_GEARS_PER_NODE = 6000;

/** A value built on the first call, then the same one. */
export function once<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

/** The message for a value of the wrong type: "must be ...", or "required" when the field is absent. */
export function expected(input: unknown, what: string): string {
  return input === undefined ? 'required' : `must be ${what}`;
}

/** A string field checked by one function that returns the problem, or undefined when valid. */
export function checkedString(rule: (value: string) => string | undefined): Validator<string> {
  return (input, path, issues) => {
    if (typeof input !== 'string') {
      issues.push({ path, message: expected(input, 'a string') });
      return input as string;
    }
    const problem = rule(input);
    if (problem !== undefined) issues.push({ path, message: problem });
    return input;
  };
}

/** A number field: finite (NaN and ±Infinity are not), then one rule. */
export function checkedNumber(rule: (value: number) => string | undefined): Validator<number> {
  return (input, path, issues) => {
    if (typeof input !== 'number' || !Number.isFinite(input)) {
      issues.push({ path, message: expected(input, 'a finite number') });
      return input as number;
    }
    const problem = rule(input);
    if (problem !== undefined) issues.push({ path, message: problem });
    return input;
  };
}

/** Any string. */
export function anyString(): Validator<string> {
  return checkedString(() => undefined);
}

/** Exactly `value` (`what` says it in messages). */
export function literal<const T extends string | number>(value: T, what: string): Validator<T> {
  return (input, path, issues) => {
    if (input !== value) issues.push({ path, message: expected(input, what) });
    return input as T;
  };
}

/** One of `values` (`what` says them in messages). */
export function oneOf<const T extends string>(values: readonly T[], what: string): Validator<T> {
  return (input, path, issues) => {
    if (!(values as readonly unknown[]).includes(input)) issues.push({ path, message: expected(input, what) });
    return input as T;
  };
}

/** Absent (undefined) or valid. */
export function optional<T>(validator: Validator<T>): Validator<T | undefined> {
  return (input, path, issues) => (input === undefined ? undefined : validator(input, path, issues));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Shape = Record<string, Validator<unknown>>;
type OptionalKeys<S extends Shape> = { [K in keyof S]: undefined extends Output<S[K]> ? K : never }[keyof S];
export type ObjectOutput<S extends Shape> = { [K in Exclude<keyof S, OptionalKeys<S>>]: Output<S[K]> } & {
  [K in OptionalKeys<S>]?: Output<S[K]>;
};

/**
 * An object with the fields of `shape`, each checked in order; the output has
 * those fields only, in that order (an absent optional field stays absent).
 * `what` words the message for a value that is not an object.
 */
export function object<S extends Shape>(shape: S, what?: string): Validator<{ [K in keyof ObjectOutput<S>]: ObjectOutput<S>[K] }> {
  const keys = Object.keys(shape);
  return (input, path, issues) => {
    if (!isObject(input)) {
      issues.push({ path, message: what === undefined ? `Invalid input: expected object, received ${kindOf(input)}` : expected(input, what) });
      return input as never;
    }
    const output: Record<string, unknown> = {};
    for (const key of keys) {
      const value = shape[key]!(input[key], namingPaths ? [...path, key] : path, issues);
      if (value !== undefined || key in input) output[key] = value;
    }
    return output as never;
  };
}

function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/** An array of valid elements; longer than `max.length`, it has that one issue and its elements are not checked. */
export function arrayOf<T>(element: Validator<T>, what: string, max?: { length: number; message: string }): Validator<T[]> {
  return (input, path, issues) => {
    if (!Array.isArray(input)) {
      issues.push({ path, message: expected(input, what) });
      return input as T[];
    }
    if (max !== undefined && input.length > max.length) {
      issues.push({ path, message: max.message });
      return input as T[];
    }
    return input.map((item, index) => element(item, namingPaths ? [...path, index] : path, issues));
  };
}

/** `validator`, then, when it found nothing wrong, `transform` of its output. */
export function pipe<T, U>(validator: Validator<T>, transform: (value: T) => U): Validator<U> {
  return (input, path, issues) => {
    const before = issues.length;
    const value = validator(input, path, issues);
    return issues.length === before ? transform(value) : (value as unknown as U);
  };
}

function lengthProblem(value: string, max: number): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > max) return `must be at most ${max} characters (got ${value.length})`;
  return undefined;
}

export function integerIn(min: number, max: number, note = '') {
  return checkedNumber((n) => {
    if (!Number.isInteger(n)) return 'must be an integer';
    if (n < min || n > max) return `must be an integer from ${min} to ${max}${note}`;
    return undefined;
  });
}

export const percentSchema = once(() => checkedNumber((n) => (n < 0 || n > 100 ? 'must be a percentage from 0 to 100' : undefined)));

const HOST_NAME = /^[a-z0-9._-]+$/;

export function nodeIdProblem(value: string): string | undefined {
  return (
    lengthProblem(value, 253) ??
    (HOST_NAME.test(value) ? undefined : "must be a host name: lowercase letters, digits, '.', '-' and '_' only")
  );
}

const CONTROL = /[\u0000-\u001f\u007f]/;

/** District and profile names: the two halves of a pool id. */
export function nameProblem(value: string): string | undefined {
  return (
    lengthProblem(value, 64) ??
    (value.includes('/')
      ? "must not contain '/' (a pool id is district/profile)"
      : CONTROL.test(value)
        ? 'must not contain control characters'
        : undefined)
  );
}

export function poolIdProblem(value: string): string | undefined {
  const slash = value.indexOf('/');
  if (slash < 0) return "must be district/profile (no '/' found)";
  if (value.indexOf('/', slash + 1) >= 0) return "must be district/profile with exactly one '/'";
  const district = nameProblem(value.slice(0, slash));
  if (district !== undefined) return `must be district/profile; the district ${district}`;
  const profile = nameProblem(value.slice(slash + 1));
  if (profile !== undefined) return `must be district/profile; the profile ${profile}`;
  return undefined;
}

const OPERATION_ID = /^[A-Za-z0-9_:.-]+$/;

export function operationIdProblem(value: string): string | undefined {
  return (
    lengthProblem(value, 128) ??
    (OPERATION_ID.test(value) ? undefined : "must use only letters, digits, '_', ':', '.' and '-'")
  );
}

export const nodeIdSchema = once(() => checkedString(nodeIdProblem));
/** A district or profile name. */
export const nameSchema = once(() => checkedString(nameProblem));
/** `district/profile`. */
export const poolIdSchema = once(() => checkedString(poolIdProblem));
/** A decisionId or drainId: the idempotency key of an action. */
export const operationIdSchema = once(() => checkedString(operationIdProblem));
export const reasonSchema = once(() => checkedString((value) => lengthProblem(value, 1024)));
export function boundedText(max: number) {
  return checkedString((value) => lengthProblem(value, max));
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](\d{2}):(\d{2}))$/;
const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * An ISO 8601 date-time with `Z` or a `±hh:mm` offset (seconds and a fraction
 * of up to 9 digits optional), as the UTC string `Date#toISOString` gives
 * (`2026-03-01T12:00:00.000Z`); undefined for anything else, including
 * impossible dates (`2026-02-30`), plain dates, epoch numbers and results
 * outside the years 0000..9999 (whose ISO form would not compare as a string).
 */
export function normalizeIsoDateTime(value: string): string | undefined {
  if (value.length > 40) return undefined;
  // Fast path: already canonical (what our own producers send) and a real instant.
  if (value.length === 24 && CANONICAL_UTC.test(value)) {
    // Read by place rather than through Date.parse and toISOString: every stats report has one (a fortieth of a big replay).
    const field = (from: number, to: number) => Number(value.slice(from, to));
    const year = field(0, 4);
    const month = field(5, 7);
    const day = field(8, 10);
    const inRange = month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) && field(11, 13) <= 23 && field(14, 16) <= 59 && field(17, 19) <= 59;
    return inRange ? value : undefined;
  }
  const m = ISO_DATE_TIME.exec(value);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s = '00', fraction = '', zone = 'Z', oh = '00', om = '00'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  if (Number(oh) > 23 || Number(om) > 59) return undefined;
  // The ECMAScript date-time format (exactly 3 fraction digits) parses the same in every engine.
  const canonical = `${y}-${mo}-${d}T${h}:${mi}:${s}.${fraction.padEnd(3, '0').slice(0, 3)}${zone}`;
  const time = Date.parse(canonical);
  if (!Number.isFinite(time)) return undefined;
  const iso = new Date(time).toISOString();
  return CANONICAL_UTC.test(iso) ? iso : undefined;
}

const ISO_EXPECTED = 'an ISO 8601 date-time with Z or an offset, e.g. 2026-03-01T12:00:00Z';

/** An ISO date-time string, normalized to UTC with milliseconds (see `normalizeIsoDateTime`). */
export const isoDateTimeSchema = once(
  (): Validator<string> => (input, path, issues) => {
    const normalized = typeof input === 'string' ? normalizeIsoDateTime(input) : undefined;
    if (normalized === undefined) issues.push({ path, message: expected(input, ISO_EXPECTED) });
    return normalized ?? (input as string);
  },
);

const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;

export const instanceIdSchema = once(() =>
  checkedString((value) => (INSTANCE_ID.test(value) ? undefined : 'must be an EC2 instance id (i- and 8 to 17 hex digits)')),
);
