import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it, expect, vi } from 'vitest';
import { loadSettings, loadSettingsFromProcess, readConfigFile } from '../../lib/config/index.js';
import { EXAMPLE, failure, minimal, tempDir } from '../support/config-inputs.js';

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
