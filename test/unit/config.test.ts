import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, it, expect, vi } from 'vitest';
import YAML from 'yaml';
import { ValidationError, type ValidationIssue } from '../../lib/errors.js';
import {
  DURATION_MESSAGE,
  findPoolConfig,
  loadSettings,
  loadSettingsFromProcess,
  parseConfig,
  poolNaming,
  readConfigFile,
  type ConfigInput,
} from '../../lib/config/index.js';

const EXAMPLE = resolve(process.cwd(), 'infra/nodescaler.example.yml');

/** The smallest valid configuration, with overrides merged in at the top level. */
function minimal(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { pools: [{ district: 'd1', profile: 'small', max: 5 }], ...overrides };
}

/** Two pools that do not collide, for rules about several pools. */
function twoPools(...extra: Record<string, unknown>[]): Record<string, unknown>[] {
  return [
    { district: 'd1', profile: 'small', max: 5, naming: { base: 'small' }, ...extra[0] },
    { district: 'd1', profile: 'medium', max: 5, naming: { base: 'medium' }, ...extra[1] },
  ];
}

function failure(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError, nothing was thrown');
}

function issuesOf(input: unknown): ValidationIssue[] {
  return [...failure(() => parseConfig(input)).issues];
}

function paths(input: unknown): string[] {
  return issuesOf(input).map((issue) => issue.path);
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'nodescaler-config-'));
}

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
    for (const key of ['handler', 'platform', 'limits', 'scaleUp', 'scaleDown', 'statsMaxAge', 'leaseTtl', 'decisionLogTtl', 'mode', 'naming', 'sweeper', 'cloudRetry'] as const) {
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
      observedHeadroom: { enabled: true, quantile: 0.95, minHistory: 6 * 3_600_000 },
      doubleWhenFull: false,
      maxNodeProvisionTime: 900_000,
      forecast: { enabled: true, window: 1_800_000, dailySeasonality: true, bootDelay: 180_000 },
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
      payoff: {
        enabled: true,
        factor: 2,
        horizon: 14_400_000,
        lookahead: 86_400_000,
        nodeHourPrice: 0.192,
        moveCost: { idle: 0, sibling: 0.0045, disruptive: 0.0225 },
        confidenceWindow: 3_600_000,
        confidenceQuantile: 0.95,
        oneOffRentFactor: 1,
        recentReturns: true,
        recentDips: true,
        followLevelRise: true,
        attrition: true,
      },
      budget: { maxMovesPerGear: 2, windows: [], doNotMoveApps: [] },
    });
    expect(config.statsMaxAge).toBe(300_000);
    expect(config.leaseTtl).toBe(900_000);
    expect(config.evaluationInterval).toBe(30_000);
    expect(config.decisionLogTtl).toBe(90 * 86_400_000);
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

describe('cross-field rules', () => {
  it('scaleUp.target must be below scaleUp.threshold', () => {
    const issues = issuesOf(minimal({ scaleUp: { threshold: 0.8, target: 0.8 }, scaleDown: { utilizationThreshold: 0.5 } }));
    expect(issues).toEqual([{ path: 'scaleUp.target', message: expect.stringContaining('below scaleUp.threshold (0.8)'), value: 0.8 }]);
  });

  it('scaleDown.utilizationThreshold must be below scaleUp.target (hysteresis)', () => {
    const issues = issuesOf(minimal({ scaleUp: { threshold: 0.8, target: 0.7 }, scaleDown: { utilizationThreshold: 0.75 } }));
    expect(issues).toEqual([{ path: 'scaleDown.utilizationThreshold', message: expect.stringContaining('flaps'), value: 0.75 }]);
    expect(parseConfig(minimal({ scaleUp: { threshold: 0.9, target: 0.8 }, scaleDown: { utilizationThreshold: 0.75 } })).scaleDown.utilizationThreshold).toBe(0.75);
  });

  it('a pool min must not exceed its max', () => {
    expect(issuesOf(minimal({ pools: [{ district: 'd1', profile: 'small', min: 4, max: 3 }] }))).toEqual([
      { path: 'pools.0.min', message: 'must not exceed max (3)', value: 4 },
    ]);
  });

  it('district/profile is unique across pools, reported at the duplicate', () => {
    const issues = issuesOf({ pools: twoPools({}, { profile: 'small' }) });
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('pools.1');
    expect(issues[0]?.message).toBe('duplicate pool d1/small (already pools.0)');
  });

  it('district and profile are non-empty and hold no "/"', () => {
    expect(paths({ pools: [{ district: 'd/1', profile: '', max: 1 }] })).toEqual(['pools.0.district', 'pools.0.profile']);
  });

  it('the pool minimums fit in limits.maxNodesTotal', () => {
    const issues = issuesOf({ limits: { maxNodesTotal: 5 }, pools: twoPools({ min: 3 }, { min: 3 }) });
    expect(issues).toEqual([{ path: 'limits.maxNodesTotal', message: expect.stringContaining('add up to 6 nodes'), value: 5 }]);
    expect(parseConfig({ limits: { maxNodesTotal: 6 }, pools: twoPools({ min: 3 }, { min: 3 }) }).limits.maxNodesTotal).toBe(6);
  });

  it('the pool minimums fit in the core and memory limits', () => {
    const template = { instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }, { name: 'm5.large', vcpus: 2, memoryGiB: 8 }] };
    const pools = [{ district: 'd1', profile: 'small', min: 3, max: 5, template }];
    expect(paths({ limits: { maxCores: 5, maxMemoryGiB: 23 }, pools })).toEqual(['limits.maxCores', 'limits.maxMemoryGiB']);
    expect(parseConfig({ limits: { maxCores: 6, maxMemoryGiB: 24 }, pools }).limits).toEqual({ maxNodesTotal: 100, maxCores: 6, maxMemoryGiB: 24 });
  });

  it('handler ec2 needs an image or launch template, an instance type and a subnet in every pool', () => {
    const ready = { imageId: 'ami-1', instanceTypes: [{ name: 'm5.large', vcpus: 2, memoryGiB: 8 }], subnets: ['subnet-1'] };
    const issues = issuesOf({ handler: 'ec2', pools: twoPools({ template: ready }, { template: {} }) });
    expect(issues.map((issue) => [issue.path, issue.message])).toEqual([
      ['pools.1.template.imageId', 'handler ec2 needs an imageId or a launchTemplate'],
      ['pools.1.template.instanceTypes', 'handler ec2 needs at least one instance type'],
      ['pools.1.template.subnets', 'handler ec2 needs at least one subnet'],
    ]);
    const viaLaunchTemplate = { ...ready, imageId: undefined, launchTemplate: { id: 'lt-0abc', version: 3 } };
    const config = parseConfig({ handler: 'ec2', pools: [{ district: 'd1', profile: 'small', max: 2, template: viaLaunchTemplate }] });
    expect(config.pools[0]?.template.launchTemplate).toEqual({ id: 'lt-0abc', version: '3' });
    // The same empty templates are fine when nothing is launched.
    expect(parseConfig({ handler: 'log', pools: twoPools() }).pools).toHaveLength(2);
  });

  it('a launch template names exactly one of id or name', () => {
    const pool = (launchTemplate: unknown) => ({ pools: [{ district: 'd1', profile: 'small', max: 2, template: { launchTemplate } }] });
    expect(paths(pool({}))).toEqual(['pools.0.template.launchTemplate']);
    expect(paths(pool({ id: 'lt-1', name: 'node' }))).toEqual(['pools.0.template.launchTemplate']);
  });

  it('handler spool needs spool.bucket, notify needs notify.topicArn', () => {
    expect(issuesOf(minimal({ handler: 'spool' }))).toEqual([{ path: 'spool.bucket', message: 'handler spool needs spool.bucket' }]);
    expect(paths(minimal({ handler: 'spool', spool: {} }))).toEqual(['spool.bucket']);
    expect(issuesOf(minimal({ handler: 'notify' }))).toEqual([{ path: 'notify.topicArn', message: 'handler notify needs notify.topicArn' }]);
    const topicArn = 'arn:aws:sns:us-east-1:123456789012:nodescaler';
    expect(parseConfig(minimal({ handler: 'notify', notify: { topicArn } })).notify).toEqual({ topicArn });
  });

  it('exhaustion backoff and cloud retry delays must not shrink', () => {
    const issues = issuesOf({ ...minimal(), scaleUp: { exhaustedBackoff: '40m' }, cloudRetry: { baseDelay: '10s', maxDelay: '1s' } });
    expect(issues.map((issue) => issue.path)).toEqual(['scaleUp.exhaustedBackoffMax', 'cloudRetry.maxDelay']);
  });

  it('leaseResendAfter is at least the SQS FIFO deduplication window', () => {
    expect(parseConfig(minimal()).leaseResendAfter).toBe(360_000);
    const [issue] = issuesOf({ ...minimal(), leaseResendAfter: '4m' });
    expect(issue).toMatchObject({ path: 'leaseResendAfter' });
    expect(issue!.message).toContain('must be at least 5m');
    expect(parseConfig({ ...minimal(), leaseResendAfter: '5m' }).leaseResendAfter).toBe(300_000);
  });

  it('platform openshift-broker needs brokerInstanceId', () => {
    expect(issuesOf(minimal({ platform: { kind: 'openshift-broker' } }))).toEqual([
      { path: 'platform.brokerInstanceId', message: 'platform openshift-broker needs brokerInstanceId' },
    ]);
    expect(parseConfig(minimal({ platform: { kind: 'openshift-broker', brokerInstanceId: 'i-0abc' } })).platform.kind).toBe('openshift-broker');
  });

  it('naming base and domain must be usable in host names', () => {
    const issues = issuesOf({
      naming: { base: 'Node_1' },
      pools: [{ district: 'd1', profile: 'small', max: 1, naming: { base: '1node', domain: 'bad_domain..com' } }],
    });
    expect(issues.map((issue) => [issue.path, issue.value])).toEqual([
      ['naming.base', 'Node_1'],
      ['pools.0.naming.base', '1node'],
      ['pools.0.naming.domain', 'bad_domain..com'],
    ]);
  });

  it('two pools must not share naming base and domain, including through the default', () => {
    expect(paths({ pools: [{ district: 'd1', profile: 'a', max: 1 }, { district: 'd1', profile: 'b', max: 1 }] })).toEqual(['pools.1.naming']);
    expect(
      paths({ pools: twoPools({ naming: { base: 'same' } }, { naming: { base: 'same', domain: 'EXAMPLE.com' } }) }),
    ).toEqual(['pools.1.naming']);
    // Same base in another domain is fine.
    expect(parseConfig({ pools: twoPools({ naming: { base: 'same' } }, { naming: { base: 'same', domain: 'other.example.org' } }) }).pools).toHaveLength(2);
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

describe('readConfigFile', () => {
  it('names the line of a YAML syntax error', () => {
    const file = join(tempDir(), 'broken.yml');
    writeFileSync(file, 'handler: log\npools:\n  - district: d1\n    profile: [small\n    max: 3\n');
    const error = failure(() => readConfigFile(file));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]?.message).toMatch(/^YAML syntax error at line 5, column \d+: /);
    expect(error.message).toContain(`configuration ${file}: `);
  });

  it('reports duplicate keys as syntax errors', () => {
    const file = join(tempDir(), 'dup.yml');
    writeFileSync(file, 'handler: log\nhandler: ec2\npools: []\n');
    expect(failure(() => readConfigFile(file)).issues[0]?.message).toMatch(/^YAML syntax error at line 2, column 1: Map keys must be unique/);
  });

  it('names the path of a missing file', () => {
    const file = join(tempDir(), 'absent.yml');
    const error = failure(() => readConfigFile(file));
    expect(error.issues).toEqual([{ path: '', message: `file not found: ${file}` }]);
    expect(error.message).toBe(`configuration ${file}: (root): file not found: ${file}`);
  });

  it('rejects an empty file', () => {
    const file = join(tempDir(), 'empty.yml');
    writeFileSync(file, '# nothing yet\n');
    expect(failure(() => readConfigFile(file)).issues[0]?.message).toContain('the file is empty');
  });

  it('reads JSON as well', () => {
    const file = join(tempDir(), 'config.json');
    writeFileSync(file, JSON.stringify(minimal({ statsMaxAge: '1m' })));
    expect(readConfigFile(file).statsMaxAge).toBe(60_000);
  });
});

describe('loadSettings', () => {
  const inline = JSON.stringify(minimal({ handler: 'log', scaleDown: { delayAfterAdd: '20m' } }));

  it('takes the configuration from NODESCALER_CONFIG (inline JSON) and the deployment from the environment', () => {
    const settings = loadSettings({
      NODESCALER_CONFIG: inline,
      NODESCALER_CONFIG_FILE: 'ignored.yml',
      NODESCALER_STAGE: 'prod',
      AWS_REGION: 'eu-west-1',
      NODESCALER_TABLE: 'nodescaler-prod-state',
      NODESCALER_STATS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/stats',
      NODESCALER_SCALE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/scale',
      NODESCALER_DRAIN_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/drain',
      NODESCALER_DECOMMISSION_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/decommission',
      NODESCALER_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      NODESCALER_LOG_LEVEL: 'WARN',
    });
    expect(settings.config.scaleDown.delayAfterAdd).toBe(1_200_000);
    expect(settings.deployment).toEqual({
      stage: 'prod',
      region: 'eu-west-1',
      tableName: 'nodescaler-prod-state',
      queues: {
        stats: 'https://sqs.eu-west-1.amazonaws.com/123456789012/stats',
        scale: 'https://sqs.eu-west-1.amazonaws.com/123456789012/scale',
        drain: 'https://sqs.eu-west-1.amazonaws.com/123456789012/drain',
        decommission: 'https://sqs.eu-west-1.amazonaws.com/123456789012/decommission',
      },
      dynamodbEndpoint: 'http://127.0.0.1:8000',
      logLevel: 'WARN',
      configFile: 'ignored.yml',
      configJson: inline,
    });
  });

  it('reads NODESCALER_CONFIG_FILE relative to the working directory', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'conf'));
    writeFileSync(join(dir, 'conf', 'stage.yml'), 'handler: log\nstatsMaxAge: 2m\npools:\n  - { district: d2, profile: large, max: 4 }\n');
    const settings = loadSettings({ NODESCALER_CONFIG_FILE: 'conf/stage.yml' }, { cwd: dir });
    expect(settings.config.statsMaxAge).toBe(120_000);
    expect(settings.config.pools[0]?.district).toBe('d2');
    expect(settings.deployment).toEqual({ stage: 'local', region: 'us-east-1', tableName: 'nodescaler-local-state', queues: {}, logLevel: 'INFO', configFile: 'conf/stage.yml' });
  });

  it('falls back to infra/nodescaler.example.yml, and treats empty variables as unset', () => {
    const settings = loadSettings({ NODESCALER_CONFIG: '', NODESCALER_CONFIG_FILE: '', AWS_REGION: '' });
    expect(settings.config).toEqual(readConfigFile(EXAMPLE));
    expect(settings.deployment.region).toBe('us-east-1');
  });

  it('uses the configuration packaged in a Lambda bundle as it is, unless a configuration variable is set', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'stage.json'), JSON.stringify(minimal({ leaseTtl: '30m' })));
    const packaged = { source: 'config/prod.yml', config: readConfigFile(EXAMPLE) };
    // Validated when the stage was packaged: taken as it is, not parsed again.
    expect(loadSettings({ NODESCALER_STAGE: 'prod' }, { packaged }).config).toBe(packaged.config);
    expect(loadSettings({ NODESCALER_CONFIG_FILE: 'stage.json' }, { cwd: dir, packaged }).config.leaseTtl).toBe(1_800_000);
    expect(loadSettings({ NODESCALER_CONFIG: inline }, { packaged }).config.scaleDown.delayAfterAdd).toBe(1_200_000);
  });

  it('reports every invalid environment variable by name and value', () => {
    const error = failure(() =>
      loadSettings({ AWS_REGION: 'mars', NODESCALER_STATS_QUEUE_URL: 'stats', NODESCALER_TABLE: 'x', NODESCALER_CONFIG: '{pools:' }),
    );
    expect(error.issues.map((issue) => [issue.path, issue.value])).toEqual([
      ['env.AWS_REGION', 'mars'],
      ['env.NODESCALER_TABLE', 'x'],
      ['env.NODESCALER_STATS_QUEUE_URL', 'stats'],
      ['env.NODESCALER_CONFIG', '{pools:'],
    ]);
    expect(error.message).toMatch(/^environment: 4 problems\n {2}- env\.AWS_REGION: expected an AWS region such as us-east-1 \(got "mars"\)/);
  });

  it('reports an invalid inline configuration against NODESCALER_CONFIG', () => {
    const error = failure(() => loadSettings({ NODESCALER_CONFIG: JSON.stringify({ pools: [] }) }));
    expect(error.issues).toEqual([{ path: 'pools', message: 'at least one pool is required', value: [] }]);
    expect(error.message).toBe('configuration NODESCALER_CONFIG: pools: at least one pool is required (got [])');
  });

  it('reports a missing NODESCALER_CONFIG_FILE by path', () => {
    const dir = tempDir();
    const error = failure(() => loadSettings({ NODESCALER_CONFIG_FILE: 'nope.yml' }, { cwd: dir }));
    expect(error.message).toContain(`file not found: ${join(dir, 'nope.yml')}`);
  });
});

describe('loadSettingsFromProcess', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('loads from process.env once and keeps the result', () => {
    vi.stubEnv('NODESCALER_CONFIG', JSON.stringify(minimal({ leaseTtl: '20m' })));
    vi.stubEnv('NODESCALER_STAGE', 'cached');
    const first = loadSettingsFromProcess();
    expect(first.config.leaseTtl).toBe(1_200_000);
    expect(first.deployment.stage).toBe('cached');
    vi.stubEnv('NODESCALER_STAGE', 'changed');
    expect(loadSettingsFromProcess()).toBe(first);
  });
});
