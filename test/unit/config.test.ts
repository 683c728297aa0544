import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, expect } from 'vitest';
import YAML from 'yaml';
import { DURATION_MESSAGE, findPoolConfig, parseConfig, poolNaming, readConfigFile, type ConfigInput } from '../../lib/config/index.js';
import { EXAMPLE, failure, issuesOf, minimal, paths, tempDir, twoPools } from '../support/config-inputs.js';

describe('example configuration', () => {
  const example = readConfigFile(EXAMPLE);

  it('parses, with handler log and two pools of district d1', () => {
    expect(example.handler).toBe('log');
    expect(example.pools.map((pool) => `${pool.district}/${pool.profile}`)).toEqual(['d1/small', 'd1/medium']);
    expect(example.pools[0]?.template.instanceTypes[0]).toEqual({ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 });
  });

  it('has the documented scale-down delays, in milliseconds', () => {
    expect(example.scaleDown.delayAfterAdd).toBe(600_000);
    expect(example.scaleDown.delayAfterDelete).toBe(60_000);
    expect(example.scaleDown.delayAfterFailure).toBe(30_000);
    expect(example.scaleDown.unneededTime).toBe(300_000);
  });

  it('writes out exactly the schema defaults for every global section', () => {
    const defaults = parseConfig(minimal());
    for (const key of ['handler', 'platform', 'limits', 'scaleUp', 'scaleDown', 'statsMaxAge', 'leaseTtl', 'decisionLogTtl', 'drainHistoryTtl', 'mode', 'naming', 'sweeper', 'cloudRetry'] as const) {
      expect(example[key], key).toEqual(defaults[key]);
    }
    expect(example.dns).toBeUndefined();
    expect(example.spool).toBeUndefined();
    expect(example.notify).toBeUndefined();
  });

  it('would also pass with handler ec2 (its templates are complete)', () => {
    const raw = YAML.parse(readFileSync(EXAMPLE, 'utf8')) as Record<string, unknown>;
    expect(parseConfig({ ...raw, handler: 'ec2' }).handler).toBe('ec2');
  });

  it('resolves pool naming key by key from the top-level default', () => {
    const medium = findPoolConfig(example, 'd1/medium');
    expect(medium).toBeDefined();
    expect(poolNaming(example, medium!)).toEqual({ base: 'd1-medium', domain: 'example.com' });
    expect(findPoolConfig(example, 'd9/none')).toBeUndefined();
  });
});

describe('defaults', () => {
  it('fills every section from a list of pools alone', () => {
    const config = parseConfig(minimal());
    expect(config.handler).toBe('log');
    expect(config.platform).toEqual({
      kind: 'simulated',
      moveDuration: 30_000,
      moveFailureRate: 0,
      commandTimeout: 1_200_000,
      brokerDir: '/var/www/openshift/broker',
    });
    expect(config.limits).toEqual({ maxNodesTotal: 100 });
    expect(config.scaleUp).toEqual({
      threshold: 0.98,
      target: 0.96,
      sustain: 120_000,
      headroomGears: 30,
      observedHeadroom: { enabled: true, quantile: 0.95, minHistory: 6 * 3_600_000, elevationWindow: 4 * 3_600_000 },
      doubleWhenFull: false,
      waitingRise: false,
      maxNodeProvisionTime: 900_000,
      forecast: { enabled: true, window: 1_800_000, trendConfidence: 2, dailySeasonality: true, bootDelay: 180_000 },
      offeringUnavailableFor: 180_000,
      exhaustedBackoff: 300_000,
      exhaustedBackoffMax: 1_800_000,
    });
    expect(config.cloudRetry).toEqual({ attempts: 4, baseDelay: 500, maxDelay: 8_000 });
    expect(config.scaleUp.forecast.lookahead).toBeUndefined();
    expect(config.scaleDown).toEqual({
      enabled: true,
      utilizationThreshold: 0.93,
      unneededTime: 300_000,
      delayAfterAdd: 600_000,
      delayAfterDelete: 60_000,
      delayAfterFailure: 30_000,
      maxConcurrentMoves: 3,
      drainTimeout: 1_800_000,
      moveAttempts: 3,
      moveRetryDelay: 30_000,
      antiAffinity: 'preferred',
      movePollInterval: 5_000,
      replaceInterrupted: true,
      candidateStrategy: 'least-disruption',
      renewDrifted: false,
      payoff: {
        enabled: true,
        factor: 2,
        horizon: 14_400_000,
        recentHorizon: 7_200_000,
        lookahead: 86_400_000,
        moveCost: { idle: 0, sibling: 0.0045, disruptive: 0.0225 },
        confidenceWindow: 3_600_000,
        confidenceQuantile: 0.95,
        oneOffRentFactor: 1,
        recentReturns: true,
        recentDips: true,
        followLevelRise: true,
        followLevelFall: true,
        attrition: true,
        attritionWhileDelayed: true,
        attritionReserve: 1,
      },
      budget: { maxMovesPerGear: 2, windows: [], renewalWindows: [], doNotMoveApps: [] },
    });
    expect(config.statsMaxAge).toBe(300_000);
    expect(config.leaseTtl).toBe(900_000);
    expect(config.evaluationInterval).toBe(30_000);
    expect(config.decisionLogTtl).toBe(90 * 86_400_000);
    expect(config.drainHistoryTtl).toBe(90 * 86_400_000);
    expect(config.naming).toEqual({ base: 'node', domain: 'example.com' });
    expect(config.sweeper).toEqual({ terminateOrphans: false, orphanAge: 600_000 });
    expect(config.dns).toBeUndefined();
    expect(config.pools[0]).toEqual({
      district: 'd1',
      profile: 'small',
      min: 0,
      max: 5,
      protectedNodes: [],
      schedules: [],
      template: { instanceTypes: [], subnets: [], securityGroups: [], tags: {}, spot: false },
    });
  });

  it('fills the defaults inside optional sections that are given', () => {
    const config = parseConfig(
      minimal({
        handler: 'spool',
        dns: { hostedZoneId: 'Z123' },
        spool: { bucket: 'my-spool' },
        pools: [{ district: 'd1', profile: 'small', max: 5, template: { volume: {}, launchTemplate: { name: 'node' } } }],
      }),
    );
    expect(config.dns).toEqual({ hostedZoneId: 'Z123', ttl: 300 });
    expect(config.spool).toEqual({ bucket: 'my-spool', prefix: 'nodescaler/' });
    expect(config.pools[0]?.template.volume).toEqual({ sizeGiB: 50, type: 'gp3', device: '/dev/xvdc' });
    expect(config.pools[0]?.template.launchTemplate).toEqual({ name: 'node', version: '$Latest' });
  });

  it('accepts a typed input object (ConfigInput) as written in code', () => {
    const input: ConfigInput = { scaleDown: { delayAfterAdd: '1m' }, pools: [{ district: 'd', profile: 'p', max: 1 }] };
    expect(parseConfig(input).scaleDown.delayAfterAdd).toBe(60_000);
  });
});

describe('openshiftRegion', () => {
  it('takes a region with zones by availability zone', () => {
    const config = parseConfig({ pools: [{ district: 'd1', profile: 'small', max: 5, openshiftRegion: { name: 'east', zone: 'east-a', zones: { 'us-east-1b': 'east-b' } } }] });
    expect(config.pools[0]!.openshiftRegion).toEqual({ name: 'east', zone: 'east-a', zones: { 'us-east-1b': 'east-b' } });
  });

  it('refuses names oo-admin-ctl-region would refuse, naming the field and the value', () => {
    expect(issuesOf({ pools: [{ district: 'd1', profile: 'small', max: 5, openshiftRegion: { name: 'east west', zones: { 'us-east-1b': '--' } } }] })).toEqual([
      { path: 'pools.0.openshiftRegion.name', message: expect.stringContaining('oo-admin-ctl-region'), value: 'east west' },
      { path: 'pools.0.openshiftRegion.zones.us-east-1b', message: expect.stringContaining('oo-admin-ctl-region'), value: '--' },
    ]);
  });
});

describe('numbers', () => {
  it('refuse a negative trend confidence, naming the field and the value', () => {
    expect(issuesOf(minimal({ scaleUp: { forecast: { trendConfidence: -1 } } }))).toEqual([
      { path: 'scaleUp.forecast.trendConfidence', message: expect.stringContaining('>=0'), value: -1 },
    ]);
  });

  it("take a pool's own move prices, any key, and refuse a negative one or an unknown kind by path and value", () => {
    const config = parseConfig({ pools: [{ district: 'd1', profile: 'paid', max: 5, naming: { base: 'paid' }, moveCost: { disruptive: 0.05 } }, { district: 'd1', profile: 'free', max: 5, naming: { base: 'free' } }] });
    expect(config.pools[0]!.moveCost).toEqual({ disruptive: 0.05 });
    expect(config.pools[1]!.moveCost).toBeUndefined();
    expect(issuesOf({ pools: [{ district: 'd1', profile: 'paid', max: 5, moveCost: { sibling: -0.01 } }] })).toEqual([
      { path: 'pools.0.moveCost.sibling', message: expect.stringContaining('>=0'), value: -0.01 },
    ]);
    expect(issuesOf({ pools: [{ district: 'd1', profile: 'paid', max: 5, moveCost: { head: 0.1 } }] })).toEqual([
      { path: 'pools.0.moveCost.head', message: 'unknown key', value: 0.1 },
    ]);
  });
});

describe('durations', () => {
  it('turn 30s, 10m and 1h30m into milliseconds', () => {
    const config = parseConfig(minimal({ scaleUp: { sustain: '30s', forecast: { window: '1h30m', lookahead: '10m' } } }));
    expect(config.scaleUp.sustain).toBe(30_000);
    expect(config.scaleUp.forecast.lookahead).toBe(600_000);
    expect(config.scaleUp.forecast.window).toBe(5_400_000);
  });

  it('report a bad duration with its path, value and the expected form', () => {
    const error = failure(() => parseConfig(minimal({ scaleDown: { delayAfterAdd: 'soon' } })));
    expect(error.issues).toEqual([{ path: 'scaleDown.delayAfterAdd', message: DURATION_MESSAGE, value: 'soon' }]);
    expect(error.message).toBe('configuration: scaleDown.delayAfterAdd: expected a duration like 30s, 10m, 1h (got "soon")');
  });

  it('take expireAfter (scaleDown\'s and a pool\'s) as a duration of at least an hour or never, unset by default', () => {
    expect(parseConfig(minimal({})).scaleDown.expireAfter).toBeUndefined();
    expect(parseConfig(minimal({ scaleDown: { expireAfter: '30d' } })).scaleDown.expireAfter).toBe(30 * 86_400_000);
    expect(parseConfig(minimal({ scaleDown: { expireAfter: 'never' } })).scaleDown.expireAfter).toBe('never');
    expect(issuesOf(minimal({ scaleDown: { expireAfter: '30m' } }))).toEqual([
      { path: 'scaleDown.expireAfter', message: "must be at least 1h: every renewal restarts the node's tenants", value: '30m' },
    ]);
    expect(issuesOf({ pools: [{ district: 'd1', profile: 'small', max: 5, expireAfter: 'monthly' }] })).toEqual([
      { path: 'pools.0.expireAfter', message: 'expected a duration like 30d or 720h, or never', value: 'monthly' },
    ]);
  });

  it('take expireGrace as a duration, unset by default (the gear cap holds expired nodes as long as it lasts)', () => {
    expect(parseConfig(minimal({})).scaleDown.expireGrace).toBeUndefined();
    expect(parseConfig(minimal({ scaleDown: { expireAfter: '30d', expireGrace: '1d' } })).scaleDown.expireGrace).toBe(86_400_000);
    expect(parseConfig(minimal({ scaleDown: { expireGrace: '0s' } })).scaleDown.expireGrace).toBe(0);
    expect(issuesOf(minimal({ scaleDown: { expireGrace: 'a day' } }))).toEqual([{ path: 'scaleDown.expireGrace', message: DURATION_MESSAGE, value: 'a day' }]);
  });

  it('take driftGrace as a duration, unset by default (the gear cap holds drifted nodes as long as it lasts)', () => {
    expect(parseConfig(minimal({})).scaleDown.driftGrace).toBeUndefined();
    expect(parseConfig(minimal({ scaleDown: { renewDrifted: true, driftGrace: '12h' } })).scaleDown.driftGrace).toBe(12 * 3_600_000);
    expect(issuesOf(minimal({ scaleDown: { driftGrace: 'soon' } }))).toEqual([{ path: 'scaleDown.driftGrace', message: DURATION_MESSAGE, value: 'soon' }]);
  });

  it('reject a bare number (seconds or milliseconds would be a guess)', () => {
    expect(issuesOf(minimal({ statsMaxAge: 300 }))).toEqual([{ path: 'statsMaxAge', message: DURATION_MESSAGE, value: 300 }]);
  });

  it('reject zero where only a positive duration makes sense', () => {
    expect(paths(minimal({ leaseTtl: '0s' }))).toEqual(['leaseTtl']);
    expect(parseConfig(minimal({ scaleDown: { delayAfterAdd: '0s' } })).scaleDown.delayAfterAdd).toBe(0);
  });
});

describe('a file with several problems', () => {
  it('reports all of them, each with path and value', () => {
    const dir = tempDir();
    const file = join(dir, 'bad.yml');
    writeFileSync(
      file,
      [
        'handler: log',
        'scaleUp:',
        '  threshold: 1.5',
        '  sustain: forever',
        'pools:',
        '  - district: d1',
        '    profile: small',
        '    min: -1',
        '    max: 3',
        '  - district: d1',
        '    profile: medium',
        '',
      ].join('\n'),
    );
    const error = failure(() => readConfigFile(file));
    expect(error.issues).toEqual([
      { path: 'scaleUp.threshold', message: expect.stringContaining('<=1'), value: 1.5 },
      { path: 'scaleUp.sustain', message: DURATION_MESSAGE, value: 'forever' },
      { path: 'pools.0.min', message: expect.stringContaining('>=0'), value: -1 },
      { path: 'pools.1.max', message: 'required' },
      { path: 'pools.1.naming', message: expect.stringContaining('give each pool its own naming.base') },
    ]);
    const lines = error.message.split('\n');
    expect(lines[0]).toBe(`configuration ${file}: 5 problems`);
    expect(lines).toContain('  - scaleUp.sustain: expected a duration like 30s, 10m, 1h (got "forever")');
    expect(lines).toContain('  - pools.1.max: required');
    expect(lines.some((line) => line.startsWith('  - pools.0.min: ') && line.endsWith('(got -1)'))).toBe(true);
    expect(lines.some((line) => line.startsWith('  - scaleUp.threshold: ') && line.endsWith('(got 1.5)'))).toBe(true);
    expect(error.retryable).toBe(false);
    expect(error.field).toBe('scaleUp.threshold');
  });

  it('reports cross-field problems next to field problems', () => {
    const issues = issuesOf({
      scaleUp: { target: 0.99 },
      platform: { moveFailureRate: 2 },
      pools: twoPools({ min: 6 }, { max: 'many' }),
    });
    expect(issues.map((issue) => issue.path)).toEqual(['platform.moveFailureRate', 'pools.1.max', 'scaleUp.target', 'pools.0.min']);
  });
});

describe('unknown keys', () => {
  it('are reported at their own path, with a hint', () => {
    const error = failure(() => parseConfig(minimal({ scaledown: { enabled: false } }), 'configuration x.yml'));
    expect(error.issues).toEqual([{ path: 'scaledown', message: 'unknown key (did you mean "scaleDown"?)', value: { enabled: false } }]);
    expect(error.message).toBe('configuration x.yml: scaledown: unknown key (did you mean "scaleDown"?) (got {"enabled":false})');
  });

  it('are found deep inside pools, several at once', () => {
    const issues = issuesOf({
      pools: [{ district: 'd1', profile: 'small', max: 1, template: { instancetypes: [], colour: 'blue' } }],
    });
    expect(issues).toEqual([
      { path: 'pools.0.template.instancetypes', message: 'unknown key (did you mean "instanceTypes"?)', value: [] },
      { path: 'pools.0.template.colour', message: 'unknown key', value: 'blue' },
    ]);
  });
});
