/**
 * The gate every node-stats message passes before the evaluator ingests it
 * (issue 18, item 3): too old to matter, or not from the node's own instance,
 * and it changes nothing. The rules are pure (lib/domain/stats-sender.ts,
 * lib/domain/ingest.ts); this module reads what they need (the node record,
 * the sending instance's tags on first sight, cached) and reports what it
 * refused: one security log line, the StatsRejected metric (alarmed:
 * infra/monitoring.yml) and a ValidationError naming SenderId, so the record
 * fails and ends in the dead-letter queue, kept as evidence.
 */
import type { Config } from '../config/index.js';
import { staleStatsIssue } from '../domain/ingest.js';
import { poolIdOf } from '../domain/model.js';
import { classifySender, judgeSender, type AdoptedHost, type SenderHost } from '../domain/stats-sender.js';
import { ValidationError } from '../errors.js';
import type { NodeStatsMessage } from '../messages/index.js';
import type { Cloud } from '../ports/cloud.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { StateStore } from '../ports/state-store.js';

export interface StatsGatePorts {
  store: Pick<StateStore, 'getNode'>;
  clock: Clock;
  log: Log;
  metrics: Metrics;
  /** Looks a sending instance up on first sight (its tags); without it, no unknown instance is believed. */
  hosts?: Pick<Cloud, 'describeHosts'>;
}

export type Admission =
  | ({ admit: true } & /** The sender's host, recorded on a node this message adopts. */ AdoptedHost)
  /** Dropped without a retry: stale stats only get staler. */
  | { admit: false; reason: string };

/** How long what the cloud said of an instance is believed (tags rarely change; a new host is looked up once). */
export const SENDER_CACHE_MS = 5 * 60_000;
/** At most this many instances remembered; past it the cache starts afresh. */
const SENDER_CACHE_SIZE = 10_000;

export class StatsGate {
  private readonly seen = new Map<string, { host: SenderHost | null; at: number }>();

  constructor(
    private readonly ports: StatsGatePorts,
    private readonly config: Pick<Config, 'statsAuth' | 'statsMaxAge'>,
  ) {}

  /**
   * Admits a message, drops a stale one, or throws the ValidationError of a
   * message its sender may not send (field `SenderId`). Cloud errors pass
   * through (the message is retried).
   */
  /** `senderId` undefined: an in-process caller (a test, the local runtime), trusted; SQS records always carry one, '' if absent. */
  async admit(message: NodeStatsMessage, senderId: string | undefined): Promise<Admission> {
    const { clock, log, metrics } = this.ports;
    const now = clock.now();
    const stale = staleStatsIssue(message.reportedAt, now, this.config.statsMaxAge);
    if (stale) {
      log.warn('node-stats dropped: too old to count', { nodeId: message.nodeId, field: stale.path, value: message.reportedAt, reason: stale.message });
      metrics.record('StatsDropped', 1, 'Count', { reason: 'stale' });
      return { admit: false, reason: `${stale.path} ${message.reportedAt} ${stale.message}` };
    }
    if (senderId === undefined) return { admit: true };
    const sender = classifySender(senderId, this.config.statsAuth);
    if (sender.kind === 'reporter') return { admit: true };
    const pool = poolIdOf(message.district, message.profile);
    const node = await this.ports.store.getNode(message.nodeId);
    let verdict = judgeSender({ sender, nodeId: message.nodeId, pool, node });
    if (verdict.ok === 'lookup') verdict = judgeSender({ sender, nodeId: message.nodeId, pool, node, host: await this.host(verdict.instanceId, now.getTime()) });
    if (verdict.ok === true) {
      const { ok, ...adopted } = verdict;
      return { admit: ok, ...adopted };
    }
    if (verdict.ok === 'lookup') throw new Error('unreachable: a sender judged twice still wants a lookup');
    log.error('security: node-stats rejected: the sender may not report for this node', {
      nodeId: message.nodeId,
      pool,
      recordedPool: node?.pool,
      senderId: sender.senderId,
      reason: verdict.reason,
    });
    metrics.record('StatsRejected', 1, 'Count', { reason: 'sender' });
    throw new ValidationError({ path: 'SenderId', message: verdict.reason, value: sender.senderId }, `node-stats for ${message.nodeId} rejected`);
  }

  private async host(instanceId: string, nowMs: number): Promise<SenderHost | null> {
    const cached = this.seen.get(instanceId);
    if (cached && nowMs - cached.at < SENDER_CACHE_MS) return cached.host;
    const hosts = this.ports.hosts;
    let host: SenderHost | null = null;
    if (hosts) {
      const info = (await hosts.describeHosts([instanceId])).get(instanceId);
      if (info && info.state !== 'terminated') {
        host = { instanceId, tags: info.tags ?? {}, ...(info.instanceType ? { instanceType: info.instanceType } : {}), ...(info.zone ? { zone: info.zone } : {}) };
      }
    }
    if (this.seen.size >= SENDER_CACHE_SIZE) this.seen.clear();
    this.seen.set(instanceId, { host, at: nowMs });
    return host;
  }
}
