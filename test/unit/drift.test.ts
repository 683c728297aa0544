import { describe, expect, it } from 'vitest';
import { driftOf, driftedSinceTest, launchedFromTemplate, templateIdentity, templateSeenPatch } from '../../lib/domain/drift.js';
import { config, node, poolConfigOf } from '../support/builders.js';

const template = (fields: Record<string, unknown> = {}) =>
  poolConfigOf(
    config(
      {},
      {
        template: {
          imageId: 'ami-0aaaaaaaaaaaaaaaa',
          instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }],
          securityGroups: ['sg-01', 'sg-02'],
          instanceProfile: 'node-host',
          tags: { team: 'paas', env: 'prod' },
          ...fields,
        },
      } as never,
    ),
  ).template;

describe('launchedFromTemplate', () => {
  it('names the image and digests the other settings, whatever order the file lists them in', () => {
    const launched = launchedFromTemplate(template());
    expect(launched.image).toBe('ami-0aaaaaaaaaaaaaaaa');
    expect(launched.settings).toMatch(/^[0-9a-f]{16}$/);
    expect(launchedFromTemplate(template({ securityGroups: ['sg-02', 'sg-01'], tags: { env: 'prod', team: 'paas' } }))).toEqual(launched);
  });

  it('names a launch template with its version, and an AMI given beside it too', () => {
    expect(launchedFromTemplate(template({ imageId: undefined, launchTemplate: { id: 'lt-0123456789abcdef0', version: 3 } })).image).toBe('lt-0123456789abcdef0@3');
    expect(launchedFromTemplate(template({ launchTemplate: { name: 'node-host' } })).image).toBe('node-host@$Latest+ami-0aaaaaaaaaaaaaaaa');
    expect(launchedFromTemplate(template({ imageId: undefined })).image).toBe('default');
  });
});

describe('driftOf', () => {
  const launchedFrom = launchedFromTemplate(template());

  it('a node launched from the template the pool names is not drifted', () => {
    expect(driftOf(node('a', { launchedFrom, instanceType: 'm5.xlarge' }), template())).toBeUndefined();
  });

  it('a new image drifts every node launched from the old one, naming both', () => {
    expect(driftOf(node('a', { launchedFrom }), template({ imageId: 'ami-0bbbbbbbbbbbbbbbb' }))).toBe('drifted: image ami-0aaaaaaaaaaaaaaaa -> ami-0bbbbbbbbbbbbbbbb');
    expect(driftOf(node('a', { launchedFrom }), template({ imageId: undefined, launchTemplate: { id: 'lt-0123456789abcdef0', version: 4 } }))).toBe(
      'drifted: image ami-0aaaaaaaaaaaaaaaa -> lt-0123456789abcdef0@4',
    );
  });

  it('launch template versions: numbers are compared; $Latest or $Default on either side matches any version of the same template', () => {
    const lt = (version: number | string, ref: Record<string, string> = { id: 'lt-0123456789abcdef0' }) => template({ imageId: undefined, launchTemplate: { ...ref, version } });
    const at6 = launchedFromTemplate(lt(6));
    // The pool's $Latest read as 7 (lib/app/launch-templates.ts): a node launched from 6 is drifted, from 7 not.
    expect(driftOf(node('a', { launchedFrom: at6 }), lt(7))).toBe('drifted: image lt-0123456789abcdef0@6 -> lt-0123456789abcdef0@7');
    expect(driftOf(node('a', { launchedFrom: launchedFromTemplate(lt(7)) }), lt(7))).toBeUndefined();
    // Launched at $Latest by a version that recorded no number: which version it ran is not known, so it is not drifted.
    expect(driftOf(node('a', { launchedFrom: launchedFromTemplate(lt('$Latest')) }), lt(7))).toBeUndefined();
    // The pool's $Latest could not be read: compared by template alone.
    expect(driftOf(node('a', { launchedFrom: at6 }), lt('$Latest'))).toBeUndefined();
    expect(driftOf(node('a', { launchedFrom: at6 }), lt('$Latest', { id: 'lt-0fedcba9876543210' }))).toBe('drifted: image lt-0123456789abcdef0@6 -> lt-0fedcba9876543210@$Latest');
    // An AMI beside the template is compared exactly.
    const withAmi = (imageId: string, version: number | string) => template({ imageId, launchTemplate: { name: 'node-host', version } });
    expect(driftOf(node('a', { launchedFrom: launchedFromTemplate(withAmi('ami-0aaaaaaaaaaaaaaaa', 3)) }), withAmi('ami-0bbbbbbbbbbbbbbbb', '$Latest'))).toBe(
      'drifted: image node-host@3+ami-0aaaaaaaaaaaaaaaa -> node-host@$Latest+ami-0bbbbbbbbbbbbbbbb',
    );
    expect(driftOf(node('a', { launchedFrom: launchedFromTemplate(withAmi('ami-0aaaaaaaaaaaaaaaa', 3)) }), withAmi('ami-0aaaaaaaaaaaaaaaa', '$Latest'))).toBeUndefined();
  });

  it('another instance profile, security group, volume, user data, tag or spot drifts it', () => {
    for (const change of [
      { instanceProfile: 'node-host-v2' },
      { securityGroups: ['sg-01'] },
      { volume: { sizeGiB: 100 } },
      { userData: 'echo patched' },
      { tags: { team: 'paas', env: 'prod', patch: '2026-11' } },
      { spot: true },
      { keyName: 'ops' },
    ]) {
      expect(driftOf(node('a', { launchedFrom }), template(change)), JSON.stringify(change)).toMatch(/^drifted: launch settings changed/);
    }
  });

  it('where a host runs (subnets) or other types added are no drift; a type the pool dropped is', () => {
    const onM5 = node('a', { launchedFrom, instanceType: 'm5.xlarge' });
    expect(driftOf(onM5, template({ subnets: ['subnet-0aaaaaaaaaaaaaaaa'] }))).toBeUndefined();
    expect(driftOf(onM5, template({ instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }, { name: 'm6i.xlarge', vcpus: 4, memoryGiB: 16 }] }))).toBeUndefined();
    expect(driftOf(onM5, template({ instanceTypes: [{ name: 'm6i.xlarge', vcpus: 4, memoryGiB: 16 }] }))).toBe('drifted: instance type m5.xlarge not in instanceTypes (m6i.xlarge)');
  });

  it('a node without a launch record (adopted, or launched before records were kept) is never called drifted', () => {
    const adopted = { ...node('a', { instanceType: 'm4.large' }), origin: 'adopted' as const };
    expect(driftOf(adopted, template({ imageId: 'ami-0bbbbbbbbbbbbbbbb' }))).toBeUndefined();
  });
});

describe('templateSeenPatch and driftedSinceTest', () => {
  const now = new Date('2026-11-21T10:00:00.000Z');
  const hoursAgo = (hours: number) => new Date(now.getTime() - hours * 3_600_000).toISOString();
  const launched = (image: string, hours: number) => ({ ...node('n-1', { createdMinutesAgo: hours * 60 }), createdAt: hoursAgo(hours), launchedFrom: { ...launchedFromTemplate(template()), image } });

  it('records the template with the time it was first seen, and keeps that time while the template stays the same', () => {
    const first = templateSeenPatch(template(), {}, now);
    expect(first).toEqual({ templateSeen: { identity: templateIdentity(template()), since: now.toISOString() } });
    expect(templateSeenPatch(template(), first, new Date(now.getTime() + 60_000))).toEqual({});
    // A new image, or a type dropped: another template, seen from now.
    for (const changed of [template({ imageId: 'ami-0bbbbbbbbbbbbbbbb' }), template({ instanceTypes: [{ name: 'm5.2xlarge', vcpus: 8, memoryGiB: 32 }] })]) {
      expect(templateSeenPatch(changed, first, now).templateSeen?.identity).not.toBe(first.templateSeen!.identity);
    }
  });

  it('a drifted node has been drifted since the template was first seen, or since its launch if later; otherwise it has no such time', () => {
    const current = template({ imageId: 'ami-0bbbbbbbbbbbbbbbb' });
    const seen = { templateSeen: { identity: templateIdentity(current), since: hoursAgo(30) } };
    const since = driftedSinceTest(current, seen);
    expect(since(launched('ami-0aaaaaaaaaaaaaaaa', 100))).toBe(Date.parse(hoursAgo(30)));
    expect(since(launched('ami-0aaaaaaaaaaaaaaaa', 2))).toBe(Date.parse(hoursAgo(2)));
    expect(since(launched('ami-0bbbbbbbbbbbbbbbb', 100))).toBeUndefined();
    // Seen as another template, or never: no clock.
    expect(driftedSinceTest(current, { templateSeen: { ...seen.templateSeen, identity: templateIdentity(template()) } })(launched('ami-0aaaaaaaaaaaaaaaa', 100))).toBeUndefined();
    expect(driftedSinceTest(current, {})(launched('ami-0aaaaaaaaaaaaaaaa', 100))).toBeUndefined();
  });
});
