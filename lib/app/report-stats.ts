/**
 * Node stats from the broker side, for platforms where no agent can run on
 * the node hosts (issue 11, item 4): for every node the state table knows
 * (active, draining, provisioning) in the chosen pools, the node's figures as
 * the platform reports them (`Platform.readNodeFacts`), sent as one
 * `node-stats` message per node to the stats queue. One-shot: a schedule
 * (cron, an EventBridge rule every minute) runs it repeatedly.
 *
 * A node whose facts cannot be read (unknown to the platform, an error, a
 * figure the schema rejects) gets no message and one warning: never a
 * guessed number.
 */
import type { Config } from '../config/index.js';
import { poolIdOf, type NodeState, type PoolId } from '../domain/model.js';
import { MESSAGE_VERSION, parseMessage, type NodeStatsMessage } from '../messages/index.js';
import type { Clock } from '../ports/clock.js';
import type { Platform } from '../ports/platform.js';
import type { OutgoingMessage, Queue } from '../ports/queue.js';
import type { StateStore } from '../ports/state-store.js';
import { ValidationError } from '../errors.js';

/** Node states whose host may be in its district and worth reporting. */
export const REPORTED_STATES: ReadonlySet<NodeState> = new Set<NodeState>(['active', 'draining', 'provisioning']);

export interface ReportStatsPorts {
  store: StateStore;
  platform: Platform;
  queue: Queue;
  clock: Clock;
  /** One line per node that got no message. */
  warn: (line: string) => void;
}

export interface ReportStatsResult {
  /** The messages the queue accepted, in the order sent. */
  sent: NodeStatsMessage[];
  /** Nodes that got no message, with why. */
  skipped: Array<{ nodeId: string; reason: string }>;
}

/** Reports the nodes of `pool` (a configured pool id), or of every configured pool. */
export async function reportStats(ports: ReportStatsPorts, config: Config, pool?: PoolId): Promise<ReportStatsResult> {
  const readNodeFacts = ports.platform.readNodeFacts?.bind(ports.platform);
  if (!readNodeFacts) throw new ValidationError({ path: 'platform.kind', message: 'this platform cannot report node facts', value: config.platform.kind });
  const pools = config.pools.map((p) => poolIdOf(p.district, p.profile));
  if (pool !== undefined && !pools.includes(pool)) {
    throw new ValidationError({ path: 'pool', message: `not a configured pool (configured: ${pools.join(', ') || 'none'})`, value: pool });
  }
  const result: ReportStatsResult = { sent: [], skipped: [] };
  const skip = (nodeId: string, reason: string) => {
    result.skipped.push({ nodeId, reason });
    ports.warn(`warning: ${nodeId}: no stats sent: ${reason}`);
  };
  const messages: NodeStatsMessage[] = [];
  // One report, one time: every message of a run carries the same reportedAt.
  const reportedAt = ports.clock.now().toISOString();
  for (const id of pool === undefined ? pools : [pool]) {
    const nodes = (await ports.store.listNodes(id)).filter((node) => REPORTED_STATES.has(node.state)).sort((a, b) => a.nodeId.localeCompare(b.nodeId));
    for (const node of nodes) {
      let facts;
      try {
        facts = await readNodeFacts(node.nodeId);
      } catch (error) {
        skip(node.nodeId, `its facts could not be read: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      if (facts === undefined) {
        skip(node.nodeId, 'the platform does not know this node');
        continue;
      }
      const candidate = {
        type: 'node-stats',
        v: MESSAGE_VERSION,
        nodeId: node.nodeId,
        district: node.district,
        profile: node.profile,
        activeGears: facts.activeGears,
        maxActiveGears: facts.maxActiveGears,
        reportedAt,
      };
      const parsed = parseMessage(candidate);
      if (!parsed.ok || parsed.message.type !== 'node-stats') {
        skip(node.nodeId, `the platform's figures do not make a valid node-stats message: ${parsed.ok ? parsed.message.type : parsed.error.message}`);
        continue;
      }
      messages.push(parsed.message);
    }
  }
  if (messages.length === 0) return result;
  const outgoing: OutgoingMessage[] = messages.map((body) => ({ body }));
  const { failed } = await ports.queue.send('stats', outgoing);
  const failedAt = new Map(failed.map((f) => [f.index, f.error]));
  messages.forEach((message, index) => {
    const error = failedAt.get(index);
    if (error === undefined) result.sent.push(message);
    else skip(message.nodeId, `the stats queue did not accept it: ${error}`);
  });
  return result;
}
