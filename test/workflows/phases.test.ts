/**
 * The stored phases of the three workflows, and records written before
 * phases were stored: their phase is derived once from what they recorded,
 * so work in flight across an upgrade resumes where it was.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStateStore } from '../../lib/adapters/memory/state-store.js';
import type { DrainRecord, NodeRecord } from '../../lib/domain/model.js';
import { derivedDrainPhase, drainPhaseOf, nextDrain } from '../../lib/workflows/drain/phases.js';
import { launchPhaseOf } from '../../lib/workflows/launch/host.js';
import { handBackTargetOf, nextRelease, releasePhaseOf } from '../../lib/workflows/release/phases.js';
import { POOL, World, apps } from '../support/gear-mover-world.js';

const AT = '2026-03-01T12:00:00.000Z';

function drain(fields: Partial<DrainRecord> = {}): DrainRecord {
  return { drainId: 'drain:d1', decisionId: 'd1', nodeId: 'n1', pool: POOL, state: 'active', version: 3, startedAt: AT, updatedAt: AT, reason: 'test', moves: [], ...fields };
}

function node(fields: Partial<NodeRecord> = {}): NodeRecord {
  return { nodeId: 'n1', pool: POOL, district: 'd1', profile: 'small', state: 'terminating', version: 2, createdAt: AT, stateChangedAt: AT, origin: 'provisioned', protected: false, ...fields };
}

describe('drain phases', () => {
  it.each([
    [{}, 'starting'],
    [{ closedAt: AT }, 'moving'],
    [{ closedAt: AT, plannedAt: AT, completedAt: AT }, 'handing-over'],
    [{ closedAt: AT, abortRequestedAt: AT }, 'aborting'],
    [{ closedAt: AT, completedAt: AT, abortRequestedAt: AT }, 'aborting'],
    [{ state: 'completed' as const, completedAt: AT }, 'completed'],
    [{ state: 'aborted' as const, abortRequestedAt: AT }, 'aborted'],
  ])('a drain with %o and no stored phase is %s', (fields, phase) => {
    expect(derivedDrainPhase(drain(fields))).toBe(phase);
    expect(drainPhaseOf(drain(fields))).toBe(phase);
  });

  it('the stored phase is the one next() acts on', () => {
    const draining = node({ state: 'draining', drainId: 'drain:d1' });
    expect(nextDrain({ drain: drain({ phase: 'starting' }), node: draining })).toEqual({ kind: 'effect', effect: { kind: 'close' } });
    expect(nextDrain({ drain: drain({ phase: 'moving', closedAt: AT }), node: draining })).toEqual({ kind: 'effect', effect: { kind: 'move' } });
    expect(nextDrain({ drain: drain({ phase: 'aborting', closedAt: AT, abortRequestedAt: AT }), node: draining })).toEqual({ kind: 'effect', effect: { kind: 'settle' } });
    expect(nextDrain({ drain: drain({ phase: 'completed', state: 'completed' }), node: draining })).toEqual({ kind: 'end', outcome: 'completed' });
  });

  it('a drain in flight without a stored phase (written before phases) finishes after the upgrade, with its phase stored', async () => {
    const w = new World(new InMemoryStateStore());
    await w.node('src.example.com', { gears: apps(2, 2) });
    await w.node('t1.example.com', { gears: [] });
    const mover = w.mover();
    await mover.handleScaleDown(await w.decideScaleDown('src.example.com'));
    // Two steps in: the node is draining and closed; then the record loses its phase, as an old writer left it.
    await mover.run({ timeLeft: (() => { let steps = 0; return () => (steps++ < 4 ? 60_000 : 0); })() });
    const [inFlight] = await w.store.listDrains(POOL);
    expect(inFlight?.closedAt).toBeDefined();
    const store = w.store as InMemoryStateStore;
    await store.updateDrain(inFlight!.drainId, inFlight!.version, { phase: undefined }, w.clock.now());
    expect((await store.getDrain(inFlight!.drainId))?.phase).toBeUndefined();
    await w.tickUntilIdle(() => w.mover());
    const [done] = await w.store.listDrains(POOL, 'completed');
    expect(done).toMatchObject({ drainId: inFlight!.drainId, phase: 'completed' });
    expect(await w.sim.listGears('src.example.com')).toEqual([]);
    w.checkGears();
  });
});

describe('release phases', () => {
  const options = { dns: true, volume: true, platform: false };

  it('a terminating node without a stored phase resumes at the step after its last recorded one', () => {
    const old = node({ instanceId: 'i-1', privateIp: '10.0.0.1', volumeId: 'vol-1', steps: { dnsRegistered: AT, releaseFor: 'decommission', dnsDeleted: AT } });
    expect(releasePhaseOf(old, options)).toBe('instanceTerminated');
    expect(nextRelease({ node: old, options })).toEqual({ kind: 'effect', effect: 'instanceTerminated' });
    const gone = node({ ...old, steps: { ...old.steps, instanceTerminated: AT, volumeDeleted: AT } });
    expect(releasePhaseOf(gone, options)).toBe('finishing');
    expect(nextRelease({ node: gone, options })).toEqual({ kind: 'write', write: { kind: 'finish' } });
  });

  it('a stored phase wins over the recorded steps; a terminated node ends', () => {
    expect(releasePhaseOf(node({ releasePhase: 'volumeDeleted', instanceId: 'i-1' }), options)).toBe('volumeDeleted');
    expect(nextRelease({ node: node({ state: 'terminated' }), options })).toEqual({ kind: 'end', outcome: 'terminated' });
  });
});

describe('launch phases', () => {
  it.each([
    [{}, 'requesting'],
    [{ steps: { launchAttempt: '0', launchOffering: 'm5.xlarge@subnet-aaa' } }, 'attempting'],
    [{ steps: { launchAttempt: '1', launchOffering: 'm5.xlarge@subnet-bbb', hostRequested: AT } }, 'requested'],
    [{ launchPhase: 'requested' as const, steps: {} }, 'requested'],
  ])('a provisioning node with %o is %s', (fields, phase) => {
    expect(launchPhaseOf(node({ state: 'provisioning', ...fields }))).toBe(phase);
  });
});

describe('release phases: handing a node back', () => {
  const options = { dns: true, volume: true, platform: true };
  const handing = (to: string, more: Record<string, string> = {}) => node({ releasePhase: 'handingBack', steps: { releaseFor: 'decommission', handBackFound: AT, handBackTo: to, ...more } });

  it('a node going back to the gear mover is moved to draining by one write', () => {
    expect(releasePhaseOf(handing('draining'), options)).toBe('handingBack');
    expect(nextRelease({ node: handing('draining'), options })).toEqual({ kind: 'write', write: { kind: 'hand-back', to: 'draining' } });
  });

  it('a node going back to active is re-opened on the platform first, then moved, and the re-open is not repeated', () => {
    expect(nextRelease({ node: handing('active'), options })).toEqual({ kind: 'effect', effect: 'reopen' });
    expect(nextRelease({ node: handing('active', { handBackReopened: AT }), options })).toEqual({ kind: 'write', write: { kind: 'hand-back', to: 'active' } });
  });

  it('a node handed back after its DNS record was deleted gets it back first, once', () => {
    expect(nextRelease({ node: handing('draining', { dnsDeleted: AT }), options })).toEqual({ kind: 'effect', effect: 'restoreDns' });
    expect(nextRelease({ node: handing('active', { dnsDeleted: AT }), options })).toEqual({ kind: 'effect', effect: 'restoreDns' });
    expect(nextRelease({ node: handing('active', { dnsDeleted: AT, handBackDnsRestored: AT }), options })).toEqual({ kind: 'effect', effect: 'reopen' });
    expect(nextRelease({ node: handing('draining', { dnsDeleted: AT, handBackDnsRestored: AT }), options })).toEqual({ kind: 'write', write: { kind: 'hand-back', to: 'draining' } });
  });

  it('an unreadable target goes the safe way (draining: emptied again, never opened by a guess)', () => {
    expect(handBackTargetOf(handing('sideways'))).toBe('draining');
    expect(handBackTargetOf(node({ steps: {} }))).toBe('draining');
  });

  it('a node handed back is no longer the release\'s to run', () => {
    expect(nextRelease({ node: node({ state: 'draining', releasePhase: undefined }), options })).toEqual({ kind: 'end', outcome: 'node is draining' });
    expect(nextRelease({ node: node({ state: 'active' }), options })).toEqual({ kind: 'end', outcome: 'node is active' });
  });
});
