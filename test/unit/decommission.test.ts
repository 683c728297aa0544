import { describe, expect, it } from 'vitest';
import { decommissionCheck, describeGears, describeIncoming, handBackReason, movesOnto, handBackTarget, nextReleaseStep, nodeLifetimeSeconds, type ReleaseStep } from '../../lib/domain/decommission.js';
import { canTransition } from '../../lib/domain/lifecycle.js';
import type { NodeRecord } from '../../lib/domain/model.js';

type Releasable = Pick<NodeRecord, 'steps' | 'joinedAt' | 'origin' | 'instanceId' | 'volumeId' | 'privateIp'>;

/** Every step in order, as if each succeeded and was recorded (resolving the volume finds `vol-1`). */
function plan(node: Releasable, options = { dns: true, volume: true }): ReleaseStep[] {
  const steps: ReleaseStep[] = [];
  let current: Releasable = { ...node, steps: { ...node.steps } };
  for (let step = nextReleaseStep(current, options); step !== undefined; step = nextReleaseStep(current, options)) {
    steps.push(step);
    current = { ...current, steps: { ...current.steps, [step]: 't' }, ...(step === 'volumeResolved' ? { volumeId: 'vol-1' } : {}) };
    if (steps.length > 10) throw new Error('no end');
  }
  return steps;
}

describe('release steps', () => {
  const launched: Releasable = { origin: 'provisioned', joinedAt: 't0', instanceId: 'i-1', privateIp: '10.0.0.1', steps: { dnsRegistered: 't0' } };

  it('releases a joined EC2 node: district, DNS, volume id, instance, volume', () => {
    expect(plan(launched)).toEqual(['removedFromDistrict', 'dnsDeleted', 'volumeResolved', 'instanceTerminated', 'volumeDeleted']);
    expect(plan({ ...launched, volumeId: 'vol-9' })).toEqual(['removedFromDistrict', 'dnsDeleted', 'instanceTerminated', 'volumeDeleted']);
  });

  it('skips what the node never had: a district it never joined, DNS nodescaler did not write, a volume the template has none of', () => {
    expect(plan({ ...launched, joinedAt: undefined, steps: {} }, { dns: true, volume: false })).toEqual(['instanceTerminated']);
    expect(plan(launched, { dns: false, volume: false })).toEqual(['removedFromDistrict', 'instanceTerminated']);
  });

  it('reports instead of terminating when there is no instance (log, spool, notify; adopted nodes)', () => {
    expect(plan({ origin: 'provisioned', joinedAt: 't0', steps: {} })).toEqual(['removedFromDistrict', 'releaseReported']);
    expect(plan({ origin: 'adopted', steps: {} })).toEqual(['removedFromDistrict', 'releaseReported']);
    expect(plan({ origin: 'provisioned', steps: {} })).toEqual(['releaseReported']);
  });

  it('resumes at the first step not recorded', () => {
    const afterTerminate = { ...launched, volumeId: 'vol-1', steps: { dnsRegistered: 't0', removedFromDistrict: 't', dnsDeleted: 't', instanceTerminated: 't' } };
    expect(nextReleaseStep(afterTerminate, { dns: true, volume: true })).toBe('volumeDeleted');
    expect(nextReleaseStep({ ...afterTerminate, steps: { ...afterTerminate.steps, volumeDeleted: 't' } }, { dns: true, volume: true })).toBeUndefined();
  });
});

describe('the last check', () => {
  const node = { nodeId: 'n-1.example.com', protected: false };
  const gears = Array.from({ length: 12 }, (_, i) => ({ uuid: `g${i}`, app: `a${i}`, size: 'small' }));

  it('releases an unprotected node the platform lists no gear on', () => {
    expect(decommissionCheck(node, [], [])).toEqual({ verdict: 'release' });
  });

  it('refuses a protected node, by flag or by the pool list, whatever the gears', () => {
    expect(decommissionCheck({ ...node, protected: true }, [], []).verdict).toBe('protected');
    expect(decommissionCheck(node, ['n-1.example.com'], []).verdict).toBe('protected');
  });

  it('refuses a node holding gears, naming at most ten of them', () => {
    const check = decommissionCheck(node, [], gears);
    expect(check.verdict).toBe('holds-gears');
    expect(check).toMatchObject({ reason: `decommission refused: the platform lists 12 gears on n-1.example.com (${describeGears(gears)})` });
    expect(describeGears(gears)).toMatch(/^g0 \(a0\), .*g9 \(a9\) and 2 more$/);
  });

  it('refuses a node that gears are moving onto until they land, naming them and their drains', () => {
    const incoming = [
      { drainId: 'drain:a', gear: gears[0]! },
      { drainId: 'drain:a', gear: gears[1]! },
      { drainId: 'drain:b', gear: gears[2]! },
    ];
    const check = decommissionCheck(node, [], [], incoming);
    expect(check).toEqual({
      verdict: 'receiving',
      incoming,
      reason: '3 gears are moving onto n-1.example.com (g0 (a0), g1 (a1), g2 (a2); drain drain:a, drain:b): it is not empty until they land',
    });
    // Gears already there, or a protection, decide first.
    expect(decommissionCheck(node, [], gears.slice(0, 1), incoming).verdict).toBe('holds-gears');
    expect(decommissionCheck({ ...node, protected: true }, [], [], incoming).verdict).toBe('protected');
  });

  it('measures a node\'s lifetime in seconds', () => {
    expect(nodeLifetimeSeconds({ createdAt: '2026-11-21T10:00:00.000Z' }, new Date('2026-11-21T12:00:30.400Z'))).toBe(7230);
    expect(nodeLifetimeSeconds({ createdAt: 'garbage' }, new Date())).toBeUndefined();
  });
});

describe('handing back a node its release found gears on', () => {
  const NOW = new Date('2026-11-24T12:00:00.000Z');
  const started = '2026-11-24T11:50:00.000Z';
  const node = { protected: false, stateChangedAt: started, steps: { releaseFor: 'decommission', releaseStarted: started } };
  const gears = [{ uuid: 'g1', app: 'shop', size: 'small' }];

  it('the lifecycle lets a terminating node go back to draining or active, and nowhere else new', () => {
    expect(canTransition('terminating', 'draining')).toBe(true);
    expect(canTransition('terminating', 'active')).toBe(true);
    expect(canTransition('terminating', 'drained')).toBe(false);
    expect(canTransition('terminating', 'provisioning')).toBe(false);
  });

  it('a pool that does not need it gets the node drained again', () => {
    expect(handBackTarget(node, undefined, NOW).to).toBe('draining');
    expect(handBackTarget(node, { lastScaleUpAt: '2026-11-24T11:00:00.000Z' }, NOW).to).toBe('draining');
    // A scale-up lease that ran out, and refusals reported before the release began, say nothing about now.
    expect(handBackTarget(node, { lease: { holder: 'up:1', kind: 'scale-up', acquiredAt: started, expiresAt: '2026-11-24T11:59:00.000Z' } }, NOW).to).toBe('draining');
    expect(handBackTarget(node, { refused: { gears: 4, windowStart: '2026-11-24T11:40:00.000Z', windowEnd: '2026-11-24T11:45:00.000Z' } }, NOW).to).toBe('draining');
    expect(handBackTarget(node, { lease: { holder: 'down:1', kind: 'scale-down', acquiredAt: started, expiresAt: '2026-11-24T12:10:00.000Z' } }, NOW).to).toBe('draining');
  });

  it('a pool that wants capacity since the release began gets the node back open, and says why', () => {
    const lease = { holder: 'up:2', kind: 'scale-up' as const, acquiredAt: started, expiresAt: '2026-11-24T12:10:00.000Z' };
    expect(handBackTarget(node, { lease }, NOW)).toEqual({ to: 'active', why: 'the pool is scaling up (up:2)' });
    expect(handBackTarget(node, { lastScaleUpAt: '2026-11-24T11:55:00.000Z' }, NOW).why).toMatch(/scaled up at 2026-11-24T11:55:00.000Z, after the release began/);
    expect(handBackTarget(node, { highSince: '2026-11-24T11:58:00.000Z' }, NOW).why).toMatch(/scale-up threshold since/);
    expect(handBackTarget(node, { refused: { gears: 3, windowStart: started, windowEnd: '2026-11-24T11:56:00.000Z' } }, NOW).why).toMatch(/refused 3 gear creation/);
  });

  it('a failed node that took gears serves, and so does a protected one', () => {
    expect(handBackTarget({ ...node, steps: { releaseFor: 'failed' } }, undefined, NOW).to).toBe('active');
    expect(handBackTarget({ ...node, protected: true }, undefined, NOW).to).toBe('active');
  });

  it('the reason names the refusal, the gears and where the node goes', () => {
    const reason = handBackReason('n-1', 'the platform refused remove-node (still has apps)', gears, { to: 'draining', why: 'the pool does not need it' });
    expect(reason).toBe('release of n-1 stopped before its host was terminated: the platform refused remove-node (still has apps); the platform lists 1 gear on it (g1 (shop)); handed back to the gear mover: the pool does not need it');
    expect(handBackReason('n-1', 'refused', [], { to: 'active', why: 'x' })).toMatch(/lists no gear yet \(moves landing\); handed back as active: x$/);
  });
});

describe('moves in flight onto a node', () => {
  const gear = (n: number) => ({ uuid: `g${n}`, app: `a${n}`, size: 'small' });
  const drains = [
    { drainId: 'd1', moves: [{ gear: gear(1), target: 'n-2', state: 'moving' as const, attempts: 1 }, { gear: gear(2), target: 'n-2', state: 'planned' as const, attempts: 0 }] },
    { drainId: 'd2', moves: [{ gear: gear(3), target: 'n-2', state: 'moving' as const, attempts: 1 }, { gear: gear(4), target: 'n-3', state: 'moving' as const, attempts: 1 }, { gear: gear(5), target: 'n-2', state: 'moved' as const, attempts: 1 }] },
  ];

  it('counts only moves started and not yet landed, onto that node', () => {
    expect(movesOnto(drains, 'n-2')).toEqual([{ drainId: 'd1', gear: gear(1) }, { drainId: 'd2', gear: gear(3) }]);
    expect(movesOnto(drains, 'n-9')).toEqual([]);
  });

  it('names them and their drains', () => {
    expect(describeIncoming('n-2', movesOnto(drains, 'n-2'))).toBe('2 gears are moving onto n-2 (g1 (a1), g3 (a3); drain d1, d2)');
    expect(describeIncoming('n-3', movesOnto(drains, 'n-3'))).toBe('1 gear is moving onto n-3 (g4 (a4); drain d2)');
  });
});
