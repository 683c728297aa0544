/**
 * An operator's drain, made safe and audited around lib/cli/nodes.ts's
 * requestDrain: a drain whose gears do not fit on the other nodes is refused
 * (exit 4) with the line `explain` shows, unless `--replace` asks for a
 * replacement node first (the evaluator starts the drain once it has
 * joined: lib/app/replace-drain.ts).
 */
import { findPoolConfig, type Config } from '../config/index.js';
import { manualDrainFit, type DrainFit } from '../domain/manual-drain.js';
import { withGearLists } from '../app/gear-lists.js';
import { protectedNodesNow } from '../domain/controls.js';
import { isProtected } from '../domain/node-stats.js';
import type { Clock } from '../ports/clock.js';
import { audit } from './audit.js';
import { refused } from './exit.js';
import { alreadyPending, requestDrain, type DrainRequestView } from './nodes.js';
import { findNode } from './snapshot.js';
import type { OpenTarget } from './target.js';

export type SafeDrainView = (DrainRequestView & { fit?: DrainFit }) | ReplaceView;

export interface ReplaceView {
  action: 'drain --replace';
  nodeId: string;
  pool: string;
  fit: DrainFit;
  replacementDecisionId: string;
  reason: string;
}

export async function safeDrain(target: OpenTarget, config: Config, clock: Clock, nodeId: string, reason: string, replace: boolean): Promise<SafeDrainView> {
  const { store } = target;
  const node = await findNode(store, config, nodeId);
  const by = await target.identity.whoAmI();
  let fit: DrainFit | undefined;
  const controls = await store.listControls();
  const waiting = controls.pendingDrains.find((pending) => pending.nodeId === node.nodeId);
  if (node.state === 'active' && waiting) throw alreadyPending(waiting, config);
  // Other refusals (not active, protected, too many drains) are requestDrain's, with its own words.
  if (node.state === 'active' && !isProtected(node, protectedNodesNow(config, findPoolConfig(config, node.pool), controls, node.pool, clock.now()))) {
    const [listed, drains] = await Promise.all([store.listNodes(node.pool), store.listDrains(node.pool, 'active')]);
    // The targets' gear lists: a gear goes to no node that holds its application's (anti-affinity).
    const nodes = await withGearLists(listed, store);
    fit = manualDrainFit({ node, nodes, drains, config, now: clock.now() });
    if (!fit.fits && !replace) {
      throw refused(
        `drain of ${node.nodeId} refused: ${fit.line}; the gear mover would close the node and abort`,
        `nodescaler drain ${node.nodeId} --replace --reason ... requests a replacement node first and drains once it has joined; nodescaler explain ${node.pool} shows the pool`,
      );
    }
    if (!fit.fits) {
      const { requestReplacementDrain } = await import('./replace-drain.js');
      const view = await requestReplacementDrain(target, config, clock, node, reason, by);
      await audit(target, config, clock, { pool: node.pool, action: 'drain --replace', subject: node.nodeId, reason, by, details: { nodeId: node.nodeId, fit: fit.line, replacementDecisionId: view.replacementDecisionId } });
      return { ...view, fit };
    }
  }
  const view = await requestDrain(target, config, clock, nodeId, reason, by, controls);
  await audit(target, config, clock, { pool: view.pool, action: 'drain', subject: view.nodeId, reason, by, details: { nodeId: view.nodeId, decisionId: view.decisionId, ...(fit ? { fit: fit.line } : {}) } });
  return fit ? { ...view, fit } : view;
}
