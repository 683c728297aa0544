/**
 * Carries out an attrition plan (lib/domain/attrition.ts) on the platform and
 * the state table. Closing writes the node's `attritionSince` first and then
 * closes the node on the platform; reopening opens it on the platform first
 * and then clears the field: a crash in between leaves a record that calls an
 * open node closed (counted as closed, reopened again later), never one that
 * calls a closed node open. A failure is logged and left for the next
 * evaluation, which plans the same again: closing is an optimisation, and a
 * reopen the pool needs is planned every evaluation until it is done.
 * Each close and reopen done is counted per pool (`NodesClosed`,
 * `NodesReopened`): no tenant feels them, but each is an admin command on the
 * broker, and a pool that flaps its nodes shows on the dashboard.
 */
import type { AttritionPlan } from '../domain/attrition.js';
import type { NodeRecord } from '../domain/model.js';
import { describeError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { Platform } from '../ports/platform.js';
import type { StateStore } from '../ports/state-store.js';

export interface AttritionPorts {
  store: StateStore;
  platform?: Platform;
  clock: Clock;
  log: Log;
  metrics: Metrics;
}

/** Applies the plan; `allowClose` is false in shadow mode or while scale-down is paused. Returns what was done, as sentences. */
export async function applyAttrition(ports: AttritionPorts, plan: AttritionPlan, nodes: readonly NodeRecord[], allowClose: boolean): Promise<string[]> {
  const { store, platform, clock, log, metrics } = ports;
  if (!platform) return [];
  const done: string[] = [];
  const byId = new Map(nodes.map((node) => [node.nodeId, node]));
  for (const step of plan.reopen) {
    const node = byId.get(step.nodeId);
    if (!node) continue;
    try {
      await platform.activateNode(node.district, node.nodeId);
      await store.updateNode(node.nodeId, node.version, { attritionSince: undefined });
      metrics.record('NodesReopened', 1, 'Count', { pool: node.pool });
      done.push(step.reason);
    } catch (error) {
      log.warn('attrition: reopening a node failed; retried next evaluation', { nodeId: node.nodeId, error: describeError(error) });
    }
  }
  for (const close of allowClose ? plan.close : []) {
    const node = byId.get(close.nodeId);
    if (node) {
      try {
        const marked = await store.updateNode(node.nodeId, node.version, { attritionSince: clock.now().toISOString() });
        try {
          await platform.deactivateNode(node.district, node.nodeId);
          metrics.record('NodesClosed', 1, 'Count', { pool: node.pool });
          done.push(close.reason);
        } catch (error) {
          // Not closed after all: clear the mark so its slots count again.
          await store.updateNode(node.nodeId, marked.version, { attritionSince: undefined }).catch(() => undefined);
          throw error;
        }
      } catch (error) {
        log.warn('attrition: closing a node failed', { nodeId: node.nodeId, error: describeError(error) });
      }
    }
  }
  return done;
}
