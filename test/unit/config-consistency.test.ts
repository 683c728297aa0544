import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { deploymentIssues } from '../../lib/config/consistency.js';
import { parseConfig } from '../../lib/config/index.js';
import { knownKeys } from '../../lib/config/parse.js';
import { configSchema } from '../../lib/config/schema.js';
import { ValidationError, type ValidationIssue } from '../../lib/errors.js';

const EXAMPLE_TEXT = readFileSync(join(import.meta.dirname, '../../infra/nodescaler.example.yml'), 'utf8');
const EXAMPLE = YAML.parse(EXAMPLE_TEXT) as Record<string, unknown>;
const pool = { district: 'd1', profile: 'small', max: 4, naming: { base: 'web', domain: 'Apps.Example.com' } };

function issuesOf(input: Record<string, unknown>): ValidationIssue[] {
  try {
    parseConfig(input);
  } catch (error) {
    if (error instanceof ValidationError) return [...error.issues];
    throw error;
  }
  return [];
}

describe('configuration consistency (lib/config/consistency.ts)', () => {
  it('keeps the example valid', () => {
    expect(issuesOf(EXAMPLE)).toEqual([]);
  });

  it('shows every key the schema knows in the example, set or in a comment (an operator learns the options there)', () => {
    const schema = configSchema();
    const paths: string[] = [];
    const walk = (path: (string | number)[]) => {
      for (const key of knownKeys(schema, path)) {
        const at = [...path, key];
        paths.push(at.join('.'));
        // A list's entries (pools, instance types, schedules) are read at index 0.
        walk(knownKeys(schema, at).length > 0 ? at : [...at, 0]);
      }
    };
    walk([]);
    expect(paths).toContain('pools.0.template.instanceTypes.0.memoryGiB');
    expect(paths).toContain('scaleUp.observedHeadroom.elevationWindow');
    // As a key of its own (`  key: ...`, `# key: ...`) or in a flow mapping (`[{ cron: ..., for: 8h }]`).
    const shown = (key: string) => new RegExp(`(^|[\\s{,#-])${key}:`, 'm').test(EXAMPLE_TEXT);
    // maxConcurrentDrains is budget.maxDraining's old name: still read, no longer taught.
    const taught = paths.filter((path) => path !== 'scaleDown.maxConcurrentDrains');
    expect(taught.filter((path) => !shown(path.split('.').at(-1)!))).toEqual([]);
  });

  it('refuses protectedNodes entries that cannot match a node name, suggesting the full one', () => {
    const issues = issuesOf({ pools: [{ ...pool, protectedNodes: ['WEB-3.apps.example.com', ' web-4.apps.example.com', 'web-5', 'web_6', 'web-7.apps.example.com', 'db host'] }] });
    expect(issues.map((i) => [i.path, i.value])).toEqual([
      ['pools.0.protectedNodes.0', 'WEB-3.apps.example.com'],
      ['pools.0.protectedNodes.1', ' web-4.apps.example.com'],
      ['pools.0.protectedNodes.2', 'web-5'],
      ['pools.0.protectedNodes.3', 'web_6'],
      ['pools.0.protectedNodes.5', 'db host'],
    ]);
    expect(issues[0]!.message).toContain('did you mean "web-3.apps.example.com"?');
    expect(issues[1]!.message).toContain('did you mean "web-4.apps.example.com"?');
    expect(issues[2]!.message).toContain('did you mean "web-5.apps.example.com"?');
    expect(issues[3]!.message).toContain('did you mean "web-6.apps.example.com"?');
    expect(issues[4]!.message).toContain('without spaces');
  });

  it('refuses district and profile names oo-admin-ctl-district would refuse', () => {
    const issues = issuesOf({ pools: [{ ...pool, district: 'east 1', profile: 'small;rm' }] });
    expect(issues.map((i) => i.path)).toEqual(['pools.0.district', 'pools.0.profile']);
    expect(issues[0]!.message).toContain('oo-admin-ctl-district');
  });

  it('refuses a broker instance that is not one instance id (a wildcard would scope SSM to every host)', () => {
    const issues = issuesOf({ platform: { kind: 'openshift-broker', brokerInstanceId: '*' }, pools: [pool] });
    expect(issues.map((i) => [i.path, i.value])).toEqual([['platform.brokerInstanceId', '*']]);
    expect(issuesOf({ platform: { kind: 'openshift-broker', brokerInstanceId: 'i-0123456789abcdef0' }, pools: [pool] })).toEqual([]);
  });

  it('refuses a lease shorter than a provision', () => {
    const issues = issuesOf({ pools: [pool], leaseTtl: '10m', scaleUp: { maxNodeProvisionTime: '20m' } });
    expect(issues.map((i) => [i.path, i.value])).toEqual([['leaseTtl', '10m']]);
    expect(issues[0]!.message).toContain('scaleUp.maxNodeProvisionTime (20m)');
  });

  it('refuses a drain timeout shorter than one move (the broker\'s command timeout, or the simulated move)', () => {
    const broker = issuesOf({ platform: { kind: 'openshift-broker', brokerInstanceId: 'i-0123456789abcdef0', commandTimeout: '20m' }, pools: [pool], scaleDown: { drainTimeout: '15m' } });
    expect(broker.map((i) => [i.path, i.value])).toEqual([['scaleDown.drainTimeout', '15m']]);
    expect(broker[0]!.message).toContain('platform.commandTimeout');
    const simulated = issuesOf({ platform: { moveDuration: '2m' }, pools: [pool], scaleDown: { drainTimeout: '1m' } });
    expect(simulated.map((i) => i.path)).toEqual(['scaleDown.drainTimeout']);
  });

  it('deployment: handler ec2 needs the real platform (validate-config and packaging refuse it with the simulated one)', () => {
    const ec2 = parseConfig({ ...EXAMPLE, handler: 'ec2' });
    expect(deploymentIssues(ec2).map((i) => [i.path, i.value])).toEqual([['platform.kind', 'simulated']]);
    const real = parseConfig({ ...EXAMPLE, handler: 'ec2', platform: { kind: 'openshift-broker', brokerInstanceId: 'i-0123456789abcdef0' } });
    expect(deploymentIssues(real)).toEqual([]);
    expect(deploymentIssues(parseConfig(EXAMPLE))).toEqual([]);
  });
});

describe('nodescaler validate-config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'consistency-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses handler ec2 without a real platform, naming the field and the value', async () => {
    const { runCli } = await import('../support/cli-world.js');
    const file = join(dir, 'ec2.yml');
    writeFileSync(file, YAML.stringify({ ...EXAMPLE, handler: 'ec2' }));
    const ran = await runCli(['validate-config', file]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('platform.kind');
    expect(ran.stderr).toContain('"simulated"');
  });
});
