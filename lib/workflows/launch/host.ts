/**
 * The launch workflow, for one node of a scale-up decision: get it a host.
 * The node's offerings (instance type x subnet) are tried in order,
 * skipping those that recently had no capacity. Each attempt is an effect
 * with its intent written first: the attempt number and its offering are
 * recorded on the node (phase `attempting`) before the cloud call, whose
 * idempotency token derives from decision, slot and attempt, so a resumed
 * attempt returns the host created the first time instead of a second one.
 * The host's fields are written after (phase `requested`); the node then
 * waits to join (the provisioner's tick watches it).
 *
 *   requesting ──intent: attempt n, offering──> attempting ──createHost──> requested
 *        ^                                          │ no capacity: offering marked unavailable
 *        └──────────── next offering ───────────────┘ (none left: exhausted, the node fails)
 */
import type { PoolConfig } from '../../config/index.js';
import { launchedFromTemplate } from '../../domain/drift.js';
import type { LaunchPhase, NodeRecord, PoolRecord } from '../../domain/model.js';
import {
  PROVISION_STEPS,
  clientToken,
  isOfferingUnavailable,
  markOfferingUnavailable,
  nameNumber,
  offeringKey,
  offeringsFor,
  parseOfferingKey,
  type Offering,
} from '../../domain/provisioning.js';
import { CapacityUnavailableError, ConflictError } from '../../errors.js';
import type { ScaleUpMessage } from '../../messages/index.js';
import type { HostInfo } from '../../ports/cloud.js';
import { patchPool, recordSteps } from '../../app/steps.js';
import { execute, type EffectResult, type Step, type Workflow } from '../engine.js';
import { hostFields, retry, type LaunchContext } from './context.js';

export type LaunchResult = { node: NodeRecord; launched: boolean } | { exhausted: string[] };

interface LaunchView {
  node: NodeRecord;
  pool: PoolRecord;
  now: Date;
  /** The offerings in the order they are tried; a recorded attempt's offering first. */
  queue: Offering[];
  /** Index of the first offering not yet tried. */
  cursor: number;
  /** queue[0] is a recorded attempt to resume (no new intent: the recorded one stands). */
  resuming: boolean;
  attempt: number;
  /** What each offering tried gave, for the exhaustion report. */
  tried: string[];
  launched: boolean;
}

interface Attempt {
  index: number;
  offering: Offering;
  attempt: number;
  /** Offerings before this one skipped for lack of capacity. */
  skipped: string[];
}

type LaunchWrite =
  | ({ kind: 'attempt' } & Attempt)
  | { kind: 'unavailable'; index: number; offering: Offering; reason: string }
  | { kind: 'host'; host: HostInfo; offering: Offering; attempt: number }
  | { kind: 'none' };

/** The stored phase; derived from the recorded steps for a node written before phases were stored. */
export function launchPhaseOf(node: NodeRecord): LaunchPhase {
  if (node.launchPhase !== undefined) return node.launchPhase;
  if (node.steps?.[PROVISION_STEPS.hostRequested] !== undefined) return 'requested';
  if (node.steps?.[PROVISION_STEPS.launchAttempt] !== undefined) return 'attempting';
  return 'requesting';
}

/** The first offering from the cursor on that is not known to lack capacity, and the ones skipped before it. */
function nextOffering(view: LaunchView): { index: number; skipped: string[] } {
  const skipped: string[] = [];
  for (let index = view.cursor; index < view.queue.length; index++) {
    const offering = view.queue[index]!;
    if (!isOfferingUnavailable(view.pool.unavailableOfferings, offering, view.now)) return { index, skipped };
    skipped.push(`${offeringKey(offering)}: skipped, no capacity until ${unavailableUntil(view.pool, offering)}`);
  }
  return { index: view.queue.length, skipped };
}

export function nextLaunch(view: LaunchView): Step<LaunchWrite, Attempt> {
  const { node } = view;
  if (node.state !== 'provisioning' || node.steps?.[PROVISION_STEPS.hostRequested] !== undefined) return { kind: 'end', outcome: 'requested' };
  if (view.resuming && view.cursor === 0) return { kind: 'effect', effect: { index: 0, offering: view.queue[0]!, attempt: view.attempt, skipped: [] } };
  const { index, skipped } = nextOffering(view);
  if (index >= view.queue.length) return { kind: 'end', outcome: 'exhausted' };
  const attempt: Attempt = { index, offering: view.queue[index]!, attempt: view.attempt + 1, skipped };
  return { kind: 'effect', effect: attempt, intent: { kind: 'attempt', ...attempt } };
}

class HostLaunch implements Workflow<LaunchView, LaunchWrite, Attempt> {
  constructor(
    private readonly ctx: LaunchContext,
    private readonly slot: number,
    private readonly message: ScaleUpMessage,
    private readonly poolConfig: PoolConfig,
  ) {}

  next = nextLaunch;

  async act({ node }: LaunchView, { index, offering, attempt }: Attempt): Promise<EffectResult<LaunchWrite>> {
    if (node.steps?.[PROVISION_STEPS.hostRequested] !== undefined) return { record: { kind: 'none' } };
    const { message, poolConfig } = this;
    const spec = {
      pool: message.pool,
      district: poolConfig.district,
      profile: poolConfig.profile,
      cloudName: node.cloudName!,
      hostName: node.nodeId,
      decisionId: message.decisionId,
      idempotencyToken: clientToken(message.decisionId, this.slot, attempt),
      offering,
      reason: message.reason,
      ...(poolConfig.template.launchTemplate ? { launchTemplateVersion: poolConfig.template.launchTemplate.version } : {}),
    };
    try {
      const host = await retry(this.ctx, () => this.ctx.ports.cloud.createHost(spec));
      return { record: { kind: 'host', host, offering, attempt } };
    } catch (error) {
      if (!(error instanceof CapacityUnavailableError)) throw error;
      this.ctx.ports.log.warn('no capacity for this offering; trying the next one', {
        pool: message.pool,
        nodeId: node.nodeId,
        decisionId: message.decisionId,
        offering: offeringKey(offering),
        reason: error.reason,
        error: error.message,
      });
      return { record: { kind: 'unavailable', index, offering, reason: error.reason } };
    }
  }

  async write(view: LaunchView, write: LaunchWrite): Promise<LaunchView> {
    const { store, clock, log } = this.ctx.ports;
    switch (write.kind) {
      case 'none':
        return view;
      case 'attempt': {
        const node = await recordAttempt(this.ctx, view.node, write.attempt, offeringKey(write.offering), this.poolConfig.template.launchTemplate?.version);
        return { ...view, node, attempt: write.attempt, tried: [...view.tried, ...write.skipped], cursor: write.index, resuming: false };
      }
      case 'unavailable': {
        const pool = await patchPool(store, this.message.pool, (current) => ({
          unavailableOfferings: markOfferingUnavailable(current.unavailableOfferings, write.offering, write.reason, clock.now(), this.ctx.config.scaleUp.offeringUnavailableFor),
        }));
        const tried = [...view.tried, `${offeringKey(write.offering)}: ${write.reason}`];
        return { ...view, pool, tried, cursor: write.index + 1, resuming: false, now: clock.now() };
      }
      case 'host': {
        const { host, offering } = write;
        const node = await recordSteps(
          store,
          view.node,
          { [PROVISION_STEPS.hostRequested]: clock.now().toISOString() },
          {
            ...hostFields(host),
            // What the host was created from, so a later template marks it drifted (lib/domain/drift.ts).
            launchedFrom: launchedFromTemplate(this.poolConfig.template),
            launchPhase: 'requested',
            reason: host.instanceId
              ? `host ${host.instanceId} (${host.instanceType ?? offering.instanceType ?? 'default type'}) requested; waiting for the node to report`
              : `host requested through handler ${this.ctx.config.handler}; waiting for the node to report`,
          },
        );
        log.info(host.instanceId ? 'host launched' : 'host requested', {
          pool: this.message.pool,
          nodeId: node.nodeId,
          cloudName: node.cloudName,
          decisionId: this.message.decisionId,
          instanceId: host.instanceId,
          offering: offeringKey(offering),
          attempt: write.attempt,
        });
        return { ...view, node, launched: true };
      }
    }
  }

}

/** Gets `start` a host: resumes a recorded attempt first, then tries the remaining offerings in order. */
export async function launch(ctx: LaunchContext, start: NodeRecord, slot: number, message: ScaleUpMessage, poolConfig: PoolConfig): Promise<LaunchResult> {
  const { store, clock } = ctx.ports;
  const pool = (await store.getPool(message.pool)) ?? (await store.ensurePool(message.pool));
  const offerings = offeringsFor(poolConfig.template, nameNumber(start.cloudName) ?? slot + 1);
  const recordedAttempt = start.steps?.[PROVISION_STEPS.launchAttempt];
  const recordedOffering = start.steps?.[PROVISION_STEPS.launchOffering];
  const resume = launchPhaseOf(start) === 'attempting' && recordedAttempt !== undefined && recordedOffering !== undefined ? parseOfferingKey(recordedOffering) : undefined;
  const queue = resume ? [resume, ...offerings.filter((offering) => offeringKey(offering) !== offeringKey(resume))] : offerings;
  const workflow = new HostLaunch(ctx, slot, message, resume ? withRecordedVersion(poolConfig, start) : poolConfig);
  const view: LaunchView = {
    node: start,
    pool,
    now: clock.now(),
    queue,
    cursor: 0,
    resuming: resume !== undefined,
    attempt: recordedAttempt === undefined ? -1 : Number(recordedAttempt),
    tried: [],
    launched: false,
  };
  const outcome = await execute(workflow, view);
  if (outcome.status === 'ended' && outcome.outcome === 'exhausted') return { exhausted: [...outcome.view.tried, ...nextOffering(outcome.view).skipped] };
  return { node: outcome.view.node, launched: outcome.view.launched };
}

/** The pool's template at the launch template version a resumed attempt recorded, so its request is the one it sent. */
function withRecordedVersion(poolConfig: PoolConfig, node: NodeRecord): PoolConfig {
  const recorded = node.steps?.[PROVISION_STEPS.launchTemplateVersion];
  const launchTemplate = poolConfig.template.launchTemplate;
  if (recorded === undefined || !launchTemplate) return poolConfig;
  return { ...poolConfig, template: { ...poolConfig.template, launchTemplate: { ...launchTemplate, version: recorded } } };
}

/**
 * Records the attempt about to be made, by conditional write: the token of
 * an attempt is only ever used for the offering recorded with it. Losing
 * the write means another delivery of the decision is launching this node
 * right now; unless it has finished, this delivery stops with a retryable
 * `ConflictError` and, redelivered later, resumes the recorded attempt.
 */
export async function recordAttempt(ctx: LaunchContext, node: NodeRecord, attempt: number, key: string, launchTemplateVersion?: string): Promise<NodeRecord> {
  const version: Record<string, string> = launchTemplateVersion === undefined ? {} : { [PROVISION_STEPS.launchTemplateVersion]: launchTemplateVersion };
  try {
    return await ctx.ports.store.updateNode(node.nodeId, node.version, {
      steps: { ...node.steps, [PROVISION_STEPS.launchAttempt]: String(attempt), [PROVISION_STEPS.launchOffering]: key, ...version },
      launchPhase: 'attempting',
    });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const latest = (error.current as NodeRecord | undefined) ?? (await ctx.ports.store.getNode(node.nodeId));
    if (latest?.steps?.[PROVISION_STEPS.hostRequested] !== undefined) return latest;
    throw new ConflictError(`node ${node.nodeId} is being launched by another delivery of ${node.decisionId}`, latest);
  }
}

function unavailableUntil(pool: PoolRecord, offering: Offering): string {
  const map = pool.unavailableOfferings ?? {};
  const keys = [offeringKey(offering), `${offering.instanceType ?? '*'}@*`, `*@${offering.subnetId ?? '*'}`];
  return keys.map((key) => map[key]).filter((until): until is string => until !== undefined).sort().pop() ?? '?';
}
