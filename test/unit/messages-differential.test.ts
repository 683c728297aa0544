/**
 * lib/messages validates with plain functions (lib/messages/fields.ts) where
 * it used zod schemas: this runs both on generated variations of every sample
 * message and EC2 event and expects the same answer, the same output (keys
 * and their order) or the same issues (path, message, value) in the same order.
 */
import { readFileSync, readdirSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EC2_EVENT_SCHEMAS, MESSAGE_SCHEMAS, type MessageType } from '../../lib/messages/schemas.js';
import { validate, type Validator } from '../../lib/messages/fields.js';
import { issuesFromZod, issuesWithValues } from '../../lib/validation.js';
import * as zodSchemas from '../support/zod-messages/schemas.js';

const SAMPLES = new URL('../../events/messages/', import.meta.url);
const samples = readdirSync(SAMPLES)
  .filter((name) => name.endsWith('.json'))
  .map((name) => JSON.parse(readFileSync(new URL(name, SAMPLES), 'utf8')) as Record<string, unknown>);

interface Pair {
  name: string;
  plain: () => Validator<unknown>;
  zod: () => { safeParse(input: unknown): { success: true; data: unknown } | { success: false; error: never } };
  sample: Record<string, unknown>;
}

const pairs: Pair[] = [];
for (const sample of samples) {
  if (typeof sample.type === 'string') {
    const type = sample.type as MessageType;
    pairs.push({ name: type, plain: MESSAGE_SCHEMAS[type].get(1)!, zod: zodSchemas.MESSAGE_SCHEMAS[type].get(1)! as never, sample });
  } else {
    const detailType = sample['detail-type'] as string;
    pairs.push({ name: detailType, plain: EC2_EVENT_SCHEMAS.get(detailType)!, zod: zodSchemas.EC2_EVENT_SCHEMAS.get(detailType)! as never, sample });
  }
}

function both(pair: Pair, input: unknown) {
  const plain = validate(pair.plain(), input);
  const zod = pair.zod().safeParse(input);
  return {
    plain: plain.ok ? { ok: true, value: plain.value } : { ok: false, issues: issuesWithValues(plain.issues, input) },
    zod: zod.success ? { ok: true, value: zod.data } : { ok: false, issues: issuesFromZod(zod.error, input) },
  };
}

/** Values a field may be replaced with: of every JSON type, edge cases of the rules. */
const oddValue = fc.oneof(
  fc.constantFrom(
    undefined, null, true, 0, -1, 1, 1.5, 100, 101, 6000, 6001, 12_000, 12_001, Number.NaN, Number.POSITIVE_INFINITY, '', ' ', 'x',
    'a/b', 'a/b/c', '/b', 'node-1.example.com', 'NODE', 'i-0123456789abcdef0', 'i-xyz', '2026-03-01T12:00:00Z', '2026-02-30T00:00:00Z',
    '2026-03-01T12:00:00.123456+02:00', 'running', 'terminate', 'node-stats', 'scale-up', 1, 2, 'x'.repeat(65), 'x'.repeat(257), 'a\u0001b',
    [], [{}], [{ uuid: 'u', app: 'a', size: 's' }], [{ uuid: 1 }], ['a', 1], {}, { 'instance-id': 'i-0123456789abcdef0' },
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

/** A sample with some fields (top-level or one level down) replaced, removed or added. */
function variation(sample: Record<string, unknown>) {
  const keys = [...Object.keys(sample), 'extra', 'gears', 'cpu', 'memory'];
  return fc.array(fc.tuple(fc.constantFrom(...keys), fc.option(fc.constantFrom(...keys), { nil: undefined }), fc.oneof(oddValue, fc.constant('delete'))), { maxLength: 4 }).map((edits) => {
    const copy = structuredClone(sample) as Record<string, unknown>;
    for (const [key, inner, value] of edits) {
      const target = inner !== undefined && typeof copy[key] === 'object' && copy[key] !== null && !Array.isArray(copy[key]) ? (copy[key] as Record<string, unknown>) : copy;
      const at = target === copy ? key : inner!;
      if (value === 'delete') delete target[at];
      else target[at] = value;
    }
    return copy;
  });
}

describe('message validation without zod', () => {
  it('covers every sample', () => {
    expect(pairs.length).toBe(samples.length);
    expect(pairs.length).toBeGreaterThanOrEqual(7);
  });

  for (const pair of [...new Map(pairs.map((p) => [p.name, p])).values()]) {
    it(`answers ${pair.name} and its variations as the zod schema did`, () => {
      const { plain, zod } = both(pair, pair.sample);
      expect(plain).toStrictEqual(zod);
      expect(plain.ok).toBe(true);
      fc.assert(
        fc.property(variation(pair.sample), (input) => {
          const { plain, zod } = both(pair, input);
          expect(plain).toStrictEqual(zod);
        }),
        { numRuns: 1500 },
      );
    });
  }

  it('answers many gears, and gears with problems, as the zod schema did', () => {
    const pair = pairs.find((p) => p.name === 'node-stats')!;
    const gear = { uuid: 'u', app: 'a', size: 's' };
    for (const gears of [Array(6000).fill(gear), Array(6001).fill(gear), [...Array(6001).fill(gear), { uuid: 1 }], [gear, null, 'x', { ...gear, extra: 1 }]]) {
      const input = { ...pair.sample, gears, activeGears: 20_000 };
      const { plain, zod } = both(pair, input);
      expect(plain).toStrictEqual(zod);
    }
  });
});
