/**
 * The node provisioner on the real state table protocol (dynalite), with EC2 and Route 53 mocked at the SDK:
 * the exact requests of a scale-up, idempotency under duplicate delivery and crashes, limits and stale decisions.
 * Capacity and other errors: provisioner-errors.test.ts; the tick: provisioner-tick.test.ts.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import type { InMemoryMetrics } from '../../lib/adapters/memory/metrics.js';
import { driftOf, launchedFromTemplate } from '../../lib/domain/drift.js';
import type { StateStore } from '../../lib/ports/state-store.js';
import { Crash, crashingStore } from '../support/crash.js';
import type { FakeEc2 } from '../support/fake-ec2.js';
import { ScriptedLaunchTemplates } from '../support/markets.js';
import { POOL, T0, MIN, configWith, tags, userData, provisionerBed } from '../support/provisioner-bed.js';

describe('NodeProvisioner (dynalite; EC2 and Route 53 mocked at the SDK)', () => {
  const bed = provisionerBed();
  const { provisioner, decide, nodesOf, r53Changes } = bed;
  let clock: VirtualClock;
  let fake: FakeEc2;
  let store: StateStore;
  let metrics: InMemoryMetrics;
  beforeEach(() => ({ clock, fake, store, metrics } = bed));

  describe('scale-up', () => {
    it('allocates names, records nodes provisioning and launches one host per node with the exact RunInstances input', async () => {
      fake.zones.set('subnet-bbb', 'us-east-1b');
      const message = await decide(2);
      const outcome = await provisioner().scaleUp(message);

      expect(outcome.kind).toBe('provisioned');
      const inputs = fake.runInputs();
      expect(inputs).toHaveLength(2);
      expect(inputs[0]).toStrictEqual({
        MinCount: 1,
        MaxCount: 1,
        ClientToken: `${message.decisionId}#0`,
        UserData: Buffer.from(userData(1)).toString('base64'),
        TagSpecifications: [
          { ResourceType: 'instance', Tags: tags(1, message.decisionId) },
          { ResourceType: 'volume', Tags: tags(1, message.decisionId) },
        ],
        ImageId: 'ami-0abc',
        InstanceType: 'm5.xlarge',
        SubnetId: 'subnet-aaa',
        SecurityGroupIds: ['sg-111'],
        IamInstanceProfile: { Name: 'nodescaler-node' },
        KeyName: 'ops',
        BlockDeviceMappings: [{ DeviceName: '/dev/xvdc', Ebs: { VolumeSize: 50, VolumeType: 'gp3', Encrypted: true, DeleteOnTermination: false } }],
      });
      expect(Buffer.from(inputs[1]!.UserData!, 'base64').toString()).toBe(userData(2));
      // Node 2 starts in the second subnet: consecutive nodes spread over the subnets.
      expect(fake.runs()).toEqual([`m5.xlarge@subnet-aaa#${message.decisionId}#0`, `m5.xlarge@subnet-bbb#${message.decisionId}#1`]);

      const nodes = await nodesOf();
      // The zone EC2 placed each in: a spot node is priced at its zone's spot price.
      expect(nodes.map((n) => [n.nodeId, n.cloudName, n.state, n.decisionId, n.instanceId, n.instanceType, n.zone, n.privateIp])).toEqual([
        ['d1-small-1.example.com', 'd1-small_1', 'provisioning', message.decisionId, 'i-00000000000000001', 'm5.xlarge', 'us-east-1a', '10.0.0.1'],
        ['d1-small-2.example.com', 'd1-small_2', 'provisioning', message.decisionId, 'i-00000000000000002', 'm5.xlarge', 'us-east-1b', '10.0.0.2'],
      ]);
      expect(nodes[0]!.steps).toEqual({
        launchAttempt: '0',
        launchOffering: 'm5.xlarge@subnet-aaa',
        hostRequested: T0.toISOString(),
        dnsRegistered: T0.toISOString(),
      });
      expect(await store.getScaleUp(message.decisionId)).toMatchObject({
        requested: 2,
        slots: [
          { nodeId: 'd1-small-1.example.com', cloudName: 'd1-small_1' },
          { nodeId: 'd1-small-2.example.com', cloudName: 'd1-small_2' },
        ],
      });

      expect(r53Changes()).toStrictEqual([1, 2].map((n) => ({
        HostedZoneId: 'Z0NODESCALER',
        ChangeBatch: {
          Comment: `nodescaler: register d1-small-${n}.example.com`,
          Changes: [{ Action: 'UPSERT', ResourceRecordSet: { Name: `d1-small-${n}.example.com`, Type: 'A', TTL: 60, ResourceRecords: [{ Value: `10.0.0.${n}` }] } }],
        },
      })));
      const pool = await store.getPool(POOL);
      expect(pool?.lease).toBeUndefined();
      expect(metrics.sum('NodesProvisioned')).toBe(2);
      expect(metrics.sum('ScaleUps')).toBe(1);
      const [logged] = await store.listDecisions(POOL, 1);
      expect(logged).toMatchObject({ kind: 'scale-up', decisionId: message.decisionId });
      expect(logged?.reason).toContain('2 of 2 hosts requested through handler ec2');
    });

    it('records what each host was launched from, so a template changed later marks the node drifted', async () => {
      const message = await decide(1);
      await provisioner().scaleUp(message);
      const [launched] = await nodesOf();
      const template = bed.config.pools[0]!.template;
      expect(launched!.launchedFrom).toEqual({ image: 'ami-0abc', settings: launchedFromTemplate(template).settings });
      expect(driftOf(launched!, template)).toBeUndefined();
      expect(driftOf(launched!, { ...template, imageId: 'ami-0def' })).toBe('drifted: image ami-0abc -> ami-0def');
    });

    it('launches a launch template at $Latest as the version number it stands for now, and records that number', async () => {
      const lt = 'lt-0123456789abcdef0';
      bed.config = configWith({}, { template: { launchTemplate: { id: lt }, instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-aaa'] } });
      const versions = new ScriptedLaunchTemplates().set(lt, 7, 2);
      await provisioner({ launchTemplateVersions: versions }).scaleUp(await decide(1));
      expect(fake.runInputs().map((input) => input.LaunchTemplate)).toEqual([{ LaunchTemplateId: lt, Version: '7' }]);
      const [launched] = await nodesOf();
      expect(launched!.launchedFrom?.image).toBe(`${lt}@7`);
      // Version 8 is published: the node is drifted once the evaluator reads $Latest as 8.
      const template = bed.config.pools[0]!.template;
      expect(driftOf(launched!, { ...template, launchTemplate: { id: lt, version: '8' } })).toBe(`drifted: image ${lt}@7 -> ${lt}@8`);
      // Without the port (the read is refused, say) the launch goes ahead at $Latest, recorded as such: never a guessed drift.
      await provisioner().scaleUp(await decide(1, new Date(T0.getTime() + MIN)));
      expect(fake.runInputs()[1]!.LaunchTemplate).toEqual({ LaunchTemplateId: lt, Version: '$Latest' });
      expect((await nodesOf())[1]!.launchedFrom?.image).toBe(`${lt}@$Latest`);
    });

    it('a resumed launch attempt sends the version it recorded, though $Latest moved on (EC2 refuses a client token sent with other parameters)', async () => {
      const lt = 'lt-0123456789abcdef0';
      bed.config = configWith({}, { template: { launchTemplate: { id: lt }, instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-aaa'] } });
      const message = await decide(1);
      const crashing = crashingStore(store);
      crashing.crashBefore((write) => write.patch.steps?.hostRequested !== undefined, 'recording the host');
      await expect(provisioner({ store: crashing, launchTemplateVersions: new ScriptedLaunchTemplates().set(lt, 7) }).scaleUp(message)).rejects.toBeInstanceOf(Crash);
      await provisioner({ launchTemplateVersions: new ScriptedLaunchTemplates().set(lt, 8) }).scaleUp(message);
      expect(fake.runInputs().map((input) => input.LaunchTemplate?.Version)).toEqual(['7', '7']);
      expect(fake.runInputs()[1]).toStrictEqual(fake.runInputs()[0]);
      expect((await nodesOf())[0]!.launchedFrom?.image).toBe(`${lt}@7`);
    });

    it('turns a duplicate scale-up into nothing: one RunInstances per node, one set of names', async () => {
      const message = await decide(2);
      const handler = provisioner();
      const { failures } = await handler.handleBatch([
        { id: 'm1', message },
        { id: 'm2', message },
      ]);
      await handler.scaleUp(message);

      expect(failures).toEqual([]);
      expect(fake.runs()).toEqual([`m5.xlarge@subnet-aaa#${message.decisionId}#0`, `m5.xlarge@subnet-bbb#${message.decisionId}#1`]);
      expect((await nodesOf()).map((n) => n.nodeId)).toEqual(['d1-small-1.example.com', 'd1-small-2.example.com']);
      expect(await store.allocateNameNumber('d1-small')).toBe(3);
      expect(metrics.sum('NodesProvisioned')).toBe(2);
      expect(await store.listDecisions(POOL, 10)).toHaveLength(1);
    });

    it('gives new nodes names no adopted node has taken (hosts added by hand use the same scheme)', async () => {
      await store.createNode(
        { nodeId: 'd1-small-1.example.com', pool: POOL, district: 'd1', profile: 'small', state: 'active', createdAt: clock.now().toISOString(), origin: 'adopted', protected: false },
        clock.now(),
      );
      const message = await decide(1);
      await provisioner().scaleUp(message);
      const ours = (await nodesOf()).filter((n) => n.decisionId === message.decisionId);
      expect(ours.map((n) => [n.nodeId, n.cloudName, n.state])).toEqual([['d1-small-2.example.com', 'd1-small_2', 'provisioning']]);
      expect(fake.runs()).toHaveLength(1);
    });

    it('resumes after a crash between RunInstances and its record with the same ClientToken: the same host, recorded once', async () => {
      const message = await decide(2);
      const crashing = crashingStore(store);
      crashing.crashBefore((write) => write.nodeId === 'd1-small-1.example.com' && write.patch.steps?.hostRequested !== undefined, 'recording the host');
      await expect(provisioner({ store: crashing }).scaleUp(message)).rejects.toBeInstanceOf(Crash);
      expect(fake.created).toHaveLength(1);

      const outcome = await provisioner().scaleUp(message);
      expect(outcome.kind).toBe('provisioned');
      expect(fake.runs()).toEqual([
        `m5.xlarge@subnet-aaa#${message.decisionId}#0`,
        `m5.xlarge@subnet-aaa#${message.decisionId}#0`,
        `m5.xlarge@subnet-bbb#${message.decisionId}#1`,
      ]);
      expect(fake.runInputs()[1]).toStrictEqual(fake.runInputs()[0]);
      expect(fake.created).toHaveLength(2);
      expect((await nodesOf()).map((n) => n.instanceId)).toEqual(['i-00000000000000001', 'i-00000000000000002']);
    });

    it('resumes after a crash between claiming the names and creating the nodes with the same names', async () => {
      const message = await decide(2);
      const crashing = crashingStore(store);
      crashing.crashBefore((write) => write.nodeId === 'd1-small-2.example.com' && write.to === 'provisioning', 'creating node 2');
      await expect(provisioner({ store: crashing }).scaleUp(message)).rejects.toBeInstanceOf(Crash);

      await provisioner().scaleUp(message);
      expect((await nodesOf()).map((n) => [n.nodeId, n.state])).toEqual([
        ['d1-small-1.example.com', 'provisioning'],
        ['d1-small-2.example.com', 'provisioning'],
      ]);
      expect(fake.created).toHaveLength(2);
      expect(await store.allocateNameNumber('d1-small')).toBe(3);
    });
  });


  describe('limits and stale decisions', () => {
    it('claims only what pool.max leaves, and says so', async () => {
      bed.config = configWith({}, { max: 3 });
      for (const n of [1, 2]) {
        await store.createNode(
          { nodeId: `old-${n}.example.com`, pool: POOL, district: 'd1', profile: 'small', state: 'active', createdAt: T0.toISOString(), origin: 'adopted', protected: false },
          T0,
        );
      }
      const message = await decide(3);
      const outcome = await provisioner().scaleUp(message);
      expect(outcome.nodes.map((n) => n.nodeId)).toEqual(['d1-small-1.example.com']);
      expect(outcome.reason).toContain('1 of 3 nodes fit: pool.max=3 (2 live in d1/small)');
      expect(fake.runs()).toHaveLength(1);
    });

    it('claims only what maxCores leaves once nodes appeared after the decision (an interruption\'s replacement, adoption)', async () => {
      bed.config = configWith({ limits: { maxNodesTotal: 100, maxCores: 16 } });
      const message = await decide(3);
      for (const n of [1, 2]) {
        await store.createNode(
          { nodeId: `old-${n}.example.com`, pool: POOL, district: 'd1', profile: 'small', state: 'active', instanceType: 'm5.xlarge', createdAt: T0.toISOString(), origin: 'adopted', protected: false },
          T0,
        );
      }
      const outcome = await provisioner().scaleUp(message);
      expect(outcome.nodes.map((n) => n.nodeId)).toEqual(['d1-small-1.example.com', 'd1-small-2.example.com']);
      expect(outcome.reason).toContain('2 of 3 nodes fit: maxCores=16 (8 in use, 4 per m5.xlarge)');
      expect(fake.runs()).toHaveLength(2);
    });

    it('refuses a late decision whose lease another decision took over, allocating no name and leaving that lease', async () => {
      const late = await decide(2, new Date(T0.getTime() - 16 * MIN));
      const current = await decide(1);
      const outcome = await provisioner().scaleUp(late);
      expect(outcome).toMatchObject({ kind: 'refused', nodes: [] });
      expect(outcome.reason).toBe(`superseded: the pool's lease is held by scale-up ${current.decisionId}`);
      expect(fake.runs()).toEqual([]);
      expect(await store.allocateNameNumber('d1-small')).toBe(1);
      expect((await store.getPool(POOL))?.lease?.holder).toBe(current.decisionId);
      expect((await store.listDecisions(POOL, 1))[0]).toMatchObject({ kind: 'refused', decisionId: late.decisionId });
    });

    it('refuses a decision for a pool that is not configured and releases its lease', async () => {
      const message = { ...(await decide(1)), pool: 'd9/none' };
      await store.acquireLease('d9/none', { holder: message.decisionId, kind: 'scale-up', ttlMs: MIN }, clock.now());
      const outcome = await provisioner().scaleUp(message);
      expect(outcome.kind).toBe('refused');
      expect((await store.getPool('d9/none'))?.lease).toBeUndefined();
    });
  });

});
