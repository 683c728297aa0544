/**
 * Whether the sweeper may terminate an orphaned host (tagged by nodescaler,
 * unknown to the state table: after a table restore, say). The table's word
 * is gone, so the platform's is the only one left: a host is terminated only
 * when the platform, asked for the node its tag names, lists no gear on it.
 * A host that cannot be asked about (no node tag, no platform) is kept and
 * reported: an operator decides, as cluster-autoscaler never deletes a node
 * it cannot account for.
 */
import type { ManagedHost } from './provisioning.js';
import { NODE_TAG } from './provisioning.js';

/** The tag that carries a host's district (written with the node tag at launch). */
export const DISTRICT_TAG = 'nodescaler:district';

export type OrphanVerdict =
  | { terminate: true; nodeId: string; district?: string }
  | { terminate: false; reason: string };

export interface OrphanFacts {
  host: ManagedHost;
  /** Whether a platform can be asked at all. */
  platform: boolean;
  /** Gears the platform lists on the host's node; `undefined` when it was not asked; 0 for a node it does not know. */
  gears?: number;
}

/** The node a host's tags name, if any: the one the platform is asked about. */
export function orphanNodeId(host: ManagedHost): string | undefined {
  const nodeId = host.tags?.[NODE_TAG];
  return nodeId === undefined || nodeId === '' ? undefined : nodeId;
}

export function orphanVerdict({ host, platform, gears }: OrphanFacts): OrphanVerdict {
  const nodeId = orphanNodeId(host);
  if (nodeId === undefined) return { terminate: false, reason: `no ${NODE_TAG} tag: the platform cannot be asked whether it holds gears` };
  if (!platform) return { terminate: false, reason: `no platform configured to ask whether node ${nodeId} holds gears` };
  if (gears === undefined) return { terminate: false, reason: `the platform was not asked whether node ${nodeId} holds gears` };
  if (gears > 0) return { terminate: false, reason: `node ${nodeId} holds ${gears} gear(s) on the platform; it is adopted when its agent reports` };
  const district = host.tags?.[DISTRICT_TAG];
  return { terminate: true, nodeId, ...(district ? { district } : {}) };
}
