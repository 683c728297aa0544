/**
 * The building blocks the configuration schema's sections share (schema.ts
 * and its section files): durations written as text, AWS ids, and the few
 * zod values every section uses. They are built on first use, like the
 * schema itself (schema.ts, buildConfigSchema).
 */
import * as z from '../zod.js';
import { parseDuration } from '../domain/duration.js';

export const DURATION_MESSAGE = 'expected a duration like 30s, 10m, 1h';

/** A duration written as text, in milliseconds in the output. */
export function duration(options: { positive?: boolean } = {}) {
  return z.pipe(
    z.string({ error: DURATION_MESSAGE }),
    z.transform((text: string, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined) {
        ctx.issues.push({ code: 'custom', message: DURATION_MESSAGE, input: text });
        return z.NEVER;
      }
      if (options.positive && ms <= 0) {
        ctx.issues.push({ code: 'custom', message: 'must be longer than 0s', input: text });
        return z.NEVER;
      }
      return ms;
    }),
  );
}

const EXPIRY_MESSAGE = 'expected a duration like 30d or 720h, or never';
const EXPIRY_MIN_MS = 3_600_000;

/**
 * How long a launched node may live before it is renewed (lib/domain/expiry.ts): a duration of at least 1h, in
 * milliseconds in the output, or `never` (as Karpenter's expireAfter: Never), which a pool writes to opt out.
 */
export function expiryDuration() {
  return z.pipe(
    z.string({ error: EXPIRY_MESSAGE }),
    z.transform((text: string, ctx): number | 'never' => {
      if (text.trim() === 'never') return 'never';
      const ms = parseDuration(text);
      if (ms === undefined) {
        ctx.issues.push({ code: 'custom', message: EXPIRY_MESSAGE, input: text });
        return z.NEVER;
      }
      if (ms < EXPIRY_MIN_MS) {
        ctx.issues.push({ code: 'custom', message: "must be at least 1h: every renewal restarts the node's tenants", input: text });
        return z.NEVER;
      }
      return ms;
    }),
  );
}

/** An optional-with-default duration: `dur('10m')` is 600000 when absent. */
export function dur(defaultText: string, options: { positive?: boolean } = {}) {
  return z.prefault(duration(options), defaultText);
}

/** A string that must start with an AWS id prefix such as `ami-`; the rest is not checked, so simulated ids pass. */
export function awsId(prefix: string) {
  return z.string().check(z.refine((text) => text.startsWith(prefix) && text.length > prefix.length, `expected an id starting with "${prefix}"`));
}

export const NAMING_BASE = /^[a-z][a-z0-9-]*$/;
const DNS_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
export const DNS_NAME = new RegExp(`^(?=.{1,253}$)${DNS_LABEL}(?:\\.${DNS_LABEL})*$`, 'i');

function buildPrimitives() {
  const fraction = z.number().check(z.gte(0), z.lte(1));
  const nonEmpty = z.string().check(z.minLength(1, 'must not be empty'));
  const int = (min: number, max?: number) => z.int().check(z.gte(min), ...(max === undefined ? [] : [z.lte(max)]));
  const positive = z.number().check(z.gt(0));

  /** Part of a pool id: non-empty and without `/` (a pool id is `district/profile`). */
  const poolIdPart = nonEmpty.check(z.refine((text) => !text.includes('/'), 'must not contain "/" (a pool id is district/profile)'));

  /** Host names are `<base>-<N>.<domain>`: the base plus a counter must stay one DNS label. */
  const namingBase = z
    .string()
    .check(
      z.regex(NAMING_BASE, 'must start with a lowercase letter and hold only a-z, 0-9 and "-"'),
      z.maxLength(40, 'must be at most 40 characters (host names are <base>-<N>.<domain>)'),
    );
  const namingDomain = z.string().check(z.regex(DNS_NAME, 'must be a valid DNS name such as example.com'));

  return { fraction, nonEmpty, int, positive, poolIdPart, namingBase, namingDomain };
}

let primitivesBuilt: ReturnType<typeof buildPrimitives> | undefined;

/** The zod values every section uses, built once, on first use. */
export function primitives(): ReturnType<typeof buildPrimitives> {
  primitivesBuilt ??= buildPrimitives();
  return primitivesBuilt;
}
