/**
 * Valid-but-hostile node-stats (issue 18, item 6): a node host of the pool,
 * compromised, sends well-formed messages meant to mislead the evaluator,
 * from its own instance-profile identity (it cannot choose another: SQS
 * stamps SenderId). Every kind must change nothing: no node it names but does
 * not run is ever adopted, and no figure it claims is ever stored. Each
 * hostile message claims `maxActiveGears` HOSTILE_CAPACITY, which no real
 * node of the scenarios has, so a stored one is found in one scan; a forged
 * district read (`district-full`: no UID left, which would stop every scale-up
 * the broker's refusals ask for) claims HOSTILE_UIDS.
 */
import type { LocalSqs } from '../../../lib/adapters/local/local-sqs.js';
import type { NodeRecord, PoolRecord } from '../../../lib/domain/model.js';

export const HOSTILE_CAPACITY = 6_000;
/** The UIDs a forged district read claims: no district of the scenarios has that many. */
export const HOSTILE_UIDS = 6_543;
export const HOSTILE_KINDS = ['spoofed-node', 'ghost-node', 'past-date', 'future-date', 'unconfigured-pool', 'huge-gear-list', 'district-full'] as const;
export type HostileKind = (typeof HOSTILE_KINDS)[number];

export class HostileHosts {
  /** Every hostile body sent: dead-lettering them is their expected end, not a poison message. */
  readonly bodies = new Set<string>();
  readonly sent: Record<HostileKind, number> = Object.fromEntries(HOSTILE_KINDS.map((kind) => [kind, 0])) as Record<HostileKind, number>;
  private ghosts = 0;

  constructor(
    private readonly sqs: LocalSqs,
    private readonly random: () => number,
    private readonly pool: { district: string; profile: string },
  ) {}

  /** One hostile message from `attacker` (a joined node and its SenderId), about `victims` (the other joined nodes). */
  send(now: Date, attacker: { nodeId: string; senderId: string }, victims: readonly string[]): HostileKind {
    const kind = HOSTILE_KINDS[Math.floor(this.random() * HOSTILE_KINDS.length)]!;
    const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000).toISOString();
    const ghost = () => `ghost-${++this.ghosts}.sim.local`;
    const victim = victims.length > 0 ? victims[Math.floor(this.random() * victims.length)]! : ghost();
    const base = { type: 'node-stats', v: 1, district: this.pool.district, profile: this.pool.profile, activeGears: 0, maxActiveGears: HOSTILE_CAPACITY, reportedAt: at(0) };
    const body = (() => {
      switch (kind) {
        case 'spoofed-node': // a roomy victim: cuts the scale-ups the pool needs
          return { ...base, nodeId: victim };
        case 'ghost-node': // a roomy node that does not exist
          return { ...base, nodeId: ghost() };
        case 'past-date': // a full node reported an hour ago, that would stay stale and hold the pool up
          return { ...base, nodeId: attacker.nodeId, activeGears: 2 * HOSTILE_CAPACITY, reportedAt: at(-55) };
        case 'future-date':
          // Another node, dated ahead to shadow its later reports. (A host may date its own node ahead: refused at
          // parsing while more than 5 minutes ahead, its redeliveries are taken once within them: a lie about itself,
          // like any other figure it reports of itself.)
          return { ...base, nodeId: victim, reportedAt: at(30) };
        case 'unconfigured-pool':
          return { ...base, nodeId: ghost(), district: 'elsewhere', profile: 'xlarge' };
        case 'huge-gear-list':
          return {
            ...base,
            nodeId: victim,
            activeGears: 1_500,
            gears: Array.from({ length: 1_500 }, (_, i) => ({ uuid: `${i.toString(16).padStart(32, '0')}`, app: `app-${i}`, size: this.pool.profile })),
          };
        case 'district-full': // only the broker's reporter may say so
          return { type: 'district-capacity', v: 1, district: this.pool.district, profile: this.pool.profile, maxCapacity: HOSTILE_UIDS, availableCapacity: 0, readAt: at(0) };
      }
    })();
    const text = JSON.stringify(body);
    this.bodies.add(text);
    this.sent[kind] += 1;
    this.sqs.sendRaw('stats', text, undefined, undefined, attacker.senderId);
    return kind;
  }

  /** What a hostile message managed to change: a node it invented, or a figure it claimed. */
  effects(nodes: readonly NodeRecord[], realNodes: ReadonlySet<string>, pool?: PoolRecord): string[] {
    const found: string[] = [];
    if (pool?.districtCapacity?.maxCapacity === HOSTILE_UIDS) found.push(`hostile district read stored for ${pool.pool} (${JSON.stringify(pool.districtCapacity)})`);
    for (const node of nodes) {
      if (!realNodes.has(node.nodeId) && node.origin === 'adopted') found.push(`node ${node.nodeId} adopted from a hostile report`);
      if (node.stats?.maxActiveGears === HOSTILE_CAPACITY) found.push(`hostile stats stored for ${node.nodeId} (${node.stats.activeGears} of ${node.stats.maxActiveGears}, reported ${node.stats.reportedAt})`);
    }
    return found;
  }

  total(): number {
    return Object.values(this.sent).reduce((sum, n) => sum + n, 0);
  }
}
