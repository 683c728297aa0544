/**
 * Properties of the plain validators on the Lambda path (lib/messages: every
 * message kind and EC2 event; lib/config/deployment.ts: the deployment
 * settings), on generated variations of the sample messages and of an
 * environment:
 * - validation never throws, whatever the input;
 * - what passes is canonical: a message's output passes again, unchanged (an
 *   EC2 event's output is the event as nodescaler reads it, for its instance);
 * - what fails names where: each issue has a path and a message, and a
 *   variation of a valid sample fails at a field the variation touched;
 * - a required field removed, or given a value of the wrong type, is named
 *   with the value found there (the dead-letter line an operator reads).
 */
import { readFileSync, readdirSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEPLOYMENT_ENV, parseDeployment } from '../../lib/config/deployment.js';
import { ValidationError } from '../../lib/errors.js';
import { validate, type Validator } from '../../lib/messages/fields.js';
import { EC2_EVENT_SCHEMAS, MESSAGE_SCHEMAS, type MessageType } from '../../lib/messages/schemas.js';
import { issuesWithValues } from '../../lib/validation.js';

const SAMPLES = new URL('../../events/messages/', import.meta.url);
const samples = readdirSync(SAMPLES)
  .filter((name) => name.endsWith('.json'))
  .map((name) => JSON.parse(readFileSync(new URL(name, SAMPLES), 'utf8')) as Record<string, unknown>);

interface Kind {
  name: string;
  validator: () => Validator<unknown>;
  sample: Record<string, unknown>;
  /** An EC2 event: its output is the event as nodescaler reads it (`Ec2Event`), not the EventBridge envelope. */
  ec2: boolean;
}

const kinds: Kind[] = samples.map((sample) =>
  typeof sample.type === 'string'
    ? { name: sample.type, validator: MESSAGE_SCHEMAS[sample.type as MessageType].get(1)!, sample, ec2: false }
    : { name: sample['detail-type'] as string, validator: EC2_EVENT_SCHEMAS.get(sample['detail-type'] as string)!, sample, ec2: true },
);

/** Values a field may be given: of every JSON type, and the edge cases of the rules. */
const oddValue = fc.oneof(
  fc.constantFrom(
    undefined, null, true, 0, -1, 1, 1.5, 100, 101, 6000, 6001, 12_000, 12_001, Number.NaN, Number.POSITIVE_INFINITY, '', ' ', 'x',
    'a/b', 'a/b/c', '/b', 'node-1.example.com', 'NODE', 'i-0123456789abcdef0', 'i-xyz', '2026-03-01T12:00:00Z', '2026-02-30T00:00:00Z',
    '2026-03-01T12:00:00.123456+02:00', 'running', 'terminate', 'node-stats', 'scale-up', 2, 'x'.repeat(65), 'x'.repeat(257), 'a\u0001b',
    [], [{}], [{ uuid: 'u', app: 'a', size: 's' }], [{ uuid: 1 }], ['a', 1], {}, { 'instance-id': 'i-0123456789abcdef0' },
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

/** A sample with up to four fields (top-level, or one level down) replaced, removed or added; with the top-level keys it touched. */
function variation(sample: Record<string, unknown>) {
  const keys = [...Object.keys(sample), 'extra', 'gears', 'cpu', 'memory'];
  const edit = fc.tuple(fc.constantFrom(...keys), fc.option(fc.constantFrom(...keys), { nil: undefined }), fc.oneof(oddValue, fc.constant('delete' as const)));
  return fc.array(edit, { minLength: 1, maxLength: 4 }).map((edits) => {
    const input = structuredClone(sample);
    const touched = new Set<string>();
    for (const [key, inner, value] of edits) {
      const nested = inner !== undefined && typeof input[key] === 'object' && input[key] !== null && !Array.isArray(input[key]);
      const target = nested ? (input[key] as Record<string, unknown>) : input;
      const at = nested ? inner! : key;
      touched.add(key);
      if (value === 'delete') delete target[at];
      else target[at] = value;
    }
    return { input, touched };
  });
}

describe('message validators (lib/messages)', () => {
  it('cover every sample message and event, and pass each sample', () => {
    expect(kinds.length).toBeGreaterThanOrEqual(7);
    for (const kind of kinds) expect(validate(kind.validator(), kind.sample).ok, kind.name).toBe(true);
  });

  for (const kind of kinds) {
    it(`${kind.name}: never throw; a pass is canonical; a failure names a field the variation touched`, () => {
      fc.assert(
        fc.property(variation(kind.sample), ({ input, touched }) => {
          const result = validate(kind.validator(), input);
          if (result.ok) {
            if (kind.ec2) expect((result.value as { instanceId: string }).instanceId).toBe((input.detail as Record<string, unknown>)['instance-id']);
            else expect(validate(kind.validator(), result.value)).toStrictEqual(result);
            return;
          }
          expect(result.issues.length).toBeGreaterThan(0);
          for (const issue of result.issues) {
            expect(issue.path.length).toBeGreaterThan(0);
            expect(issue.message.length).toBeGreaterThan(0);
          }
          // A cross-field rule is reported at one field and names the other in its message.
          const names = (issue: { path: readonly PropertyKey[]; message: string }, key: string) => String(issue.path[0]) === key || new RegExp(`\\b${key}\\b`).test(issue.message);
          expect(result.issues.some((issue) => [...touched].some((key) => names(issue, key)))).toBe(true);
        }),
        { numRuns: 1000 },
      );
    });

    it(`${kind.name}: a required field removed or of the wrong type is named, with the value found`, () => {
      const required = Object.keys(kind.sample).filter((key) => {
        const { [key]: _dropped, ...rest } = kind.sample;
        return !validate(kind.validator(), rest).ok;
      });
      expect(required.length).toBeGreaterThan(0);
      fc.assert(
        fc.property(fc.constantFrom(...required), fc.constantFrom(null, true, [], {}, -0.5), (key, wrong) => {
          const { [key]: _dropped, ...missing } = kind.sample;
          const gone = validate(kind.validator(), missing);
          expect(gone.ok).toBe(false);
          if (!gone.ok) expect(gone.issues.map((issue) => issue.path[0])).toContain(key);
          const input = { ...kind.sample, [key]: wrong };
          const result = validate(kind.validator(), input);
          if (result.ok) return; // an object-valued field may take {} (its own fields are then optional)
          const named = issuesWithValues(result.issues, input).find((issue) => issue.path === key || issue.path.startsWith(`${key}.`));
          expect(named).toBeDefined();
          if (named!.path === key) expect(named!.value).toStrictEqual(wrong);
        }),
        { numRuns: 200 },
      );
    });
  }
});

describe('deployment settings (lib/config/deployment.ts)', () => {
  const names = Object.values(DEPLOYMENT_ENV);
  const value = fc.oneof(
    fc.constantFrom('', 'dev', 'prod-1', 'us-east-1', 'eu-west-3', 'EU', 'x y', 'http://localhost:4566', 'https://sqs.us-east-1.amazonaws.com/123456789012/q', 'not a url'),
    fc.constantFrom('DEBUG', 'INFO', 'LOUD', '{}', '{', 'nodescaler.yml', '2026-11-21T10:00:30Z', '2026-11-21', 'state-table', 'a'),
    fc.string({ maxLength: 12 }),
  );
  const environment = fc.dictionary(fc.constantFrom(...names), value, { maxKeys: names.length });

  it('never throw anything but a ValidationError, whose issues name variables that were set, with their values', () => {
    fc.assert(
      fc.property(environment, (env) => {
        let deployment;
        try {
          deployment = parseDeployment(env);
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError);
          const issues = (error as ValidationError).issues;
          expect(issues.length).toBeGreaterThan(0);
          for (const issue of issues) {
            expect(issue.path).toMatch(/^env\./);
            const name = issue.path.slice('env.'.length);
            expect(names).toContain(name);
            expect(env[name]).toBeTruthy();
            expect(issue.value).toBe(env[name]);
          }
          return;
        }
        // Accepted: every field set in the environment is kept (URLs trimmed), every other one is its default or absent.
        expect(deployment.stage).toBe(env.NODESCALER_STAGE || 'local');
        expect(deployment.region).toBe(env.AWS_REGION || 'us-east-1');
        expect(deployment.tableName).toBe(env.NODESCALER_TABLE || 'nodescaler-local-state');
        expect(deployment.logLevel).toBe(env.NODESCALER_LOG_LEVEL || 'INFO');
        expect(deployment.configFile).toBe(env.NODESCALER_CONFIG_FILE || undefined);
        expect(parseDeployment(env)).toStrictEqual(deployment);
      }),
      { numRuns: 2000 },
    );
  });

  it('accept every stage name of letters, digits and dashes up to 40 long, and refuse anything else there', () => {
    const stage = fc.stringMatching(/^[a-zA-Z0-9-]{1,40}$/);
    fc.assert(
      fc.property(stage, (name) => {
        expect(parseDeployment({ NODESCALER_STAGE: name }).stage).toBe(name);
      }),
      { numRuns: 300 },
    );
    const bad = fc.string({ minLength: 1, maxLength: 50 }).filter((name) => !/^[a-zA-Z0-9-]{1,40}$/.test(name));
    fc.assert(
      fc.property(bad, (name) => {
        expect(() => parseDeployment({ NODESCALER_STAGE: name })).toThrow(/NODESCALER_STAGE/);
      }),
      { numRuns: 300 },
    );
  });
});
