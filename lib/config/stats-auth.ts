/**
 * `statsAuth`: who may send node-stats (issue 18, item 3). SQS stamps every
 * message with its sender's identity (`SenderId`): for an EC2 instance
 * profile `<role id>:<instance id>` (EC2 names the role session after the
 * instance, and the host cannot choose it), for a role session
 * `<role id>:<session name>`, for an IAM user its user id. The evaluator
 * takes a node's stats only from that node's own instance, or from a
 * configured reporter (the broker-side `report-stats`, which reports every
 * node). lib/domain/stats-sender.ts applies the rules.
 */
import * as z from '../zod.js';

/** An IAM unique id (role AROA..., user AIDA...): what SenderId carries before its colon. */
const UNIQUE_ID = /^[A-Z0-9]{16,128}$/;

export function statsAuthSchema() {
  const uniqueId = z.string().check(z.regex(UNIQUE_ID, 'must be an IAM unique id such as AROAEXAMPLEID123456 (aws iam get-role --query Role.RoleId)'));
  return z.strictObject({
    /**
     * Off only for sites whose node hosts have no instance profile (their
     * SenderId names no instance): any host may then report for any node.
     * Packaging warns loudly.
     */
    enabled: z._default(z.boolean(), true),
    /** The role id of the node hosts' instance-profile role; empty: any role whose session is an instance id. */
    nodeRoleIds: z._default(z.array(uniqueId), []),
    /** Role or user ids allowed to report for every node: the broker-side `report-stats` (its role). */
    reporterIds: z._default(z.array(uniqueId), []),
  });
}

/**
 * What packaging prints, loudly, and goes on: the check turned off, or, on a
 * stage that drives real hosts, a node role left unpinned (a node host still
 * cannot pose as another instance, since EC2 names its session; anyone who
 * can assume some role with a session name of their choosing could).
 */
export function statsAuthWarnings(config: { handler: string; platform: { kind: string }; statsAuth: { enabled: boolean; nodeRoleIds: readonly string[] } }): string[] {
  if (!config.statsAuth.enabled) {
    return [
      'statsAuth.enabled is false: node-stats are NOT bound to their sender. Any node host (or anyone who can send to the stats queue) ' +
        'can report for any node and pool: hold a pool at max, hide load and delay scale-ups, or adopt fake nodes. ' +
        'Turn it on (statsAuth.nodeRoleIds: [<node role id>]) once the node hosts have an instance profile.',
    ];
  }
  const real = config.handler === 'ec2' || config.platform.kind === 'openshift-broker';
  if (!real || config.statsAuth.nodeRoleIds.length > 0) return [];
  return [
    'statsAuth.nodeRoleIds is empty: node-stats are taken from any role session named after an instance, not only from the node hosts\' ' +
      'instance-profile role. Pin it: statsAuth.nodeRoleIds: [$(aws iam get-role --role-name <node role> --query Role.RoleId)].',
  ];
}
