import { describe, it, expect } from 'vitest';
import { parseConfig } from '../../lib/config/index.js';
import { issuesOf, minimal, paths, twoPools } from '../support/config-inputs.js';

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
