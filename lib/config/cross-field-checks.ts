/**
 * The configuration's cross-field rules (hysteresis, min <= max, unique pools,
 * handler needs, budget keys), run by the one schema (lib/config/schema.ts) in
 * a root `superRefine`.
 */
import { poolIdOf } from '../domain/model.js';
import * as z from '../zod.js';
import { legacyDrainsIssue } from './budget-schema.js';
import { consistencyChecks } from './consistency.js';

// Cross-field rules. They run even when some fields failed their own checks
// (`when: () => true`), so the value may hold raw input in places: every rule
// reads through the guards below and stays silent about a field that is not
// itself valid (that field has its own issue already).

type Ctx = z.core.$RefinementCtx;
type Path = (string | number)[];

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
/** A number that passes its own field's range check; an out-of-range one already has its issue. */
function within(value: unknown, min: number, max = Number.MAX_SAFE_INTEGER, integer = false): number | undefined {
  const n = num(value);
  return n !== undefined && n >= min && n <= max && (!integer || Number.isInteger(n)) ? n : undefined;
}
function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
function list(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

function issue(ctx: Ctx, path: Path, message: string): void {
  ctx.addIssue({ code: 'custom', path, message });
}

export function crossFieldChecks(value: unknown, ctx: Ctx): void {
  consistencyChecks(value, (path, message) => issue(ctx, path, message));
  const root = record(value);
  if (!root) return;
  const handler = str(root.handler);
  const scaleUp = record(root.scaleUp);
  const scaleDown = record(root.scaleDown);

  // Hysteresis: scale up above threshold, to target, scale down below utilizationThreshold.
  const threshold = within(scaleUp?.threshold, 0, 1);
  const target = within(scaleUp?.target, 0, 1);
  const low = within(scaleDown?.utilizationThreshold, 0, 1);
  if (threshold !== undefined && target !== undefined && !(target < threshold)) {
    issue(ctx, ['scaleUp', 'target'], `must be below scaleUp.threshold (${threshold}), or every scale-up ends above the threshold again`);
  }
  const backoff = within(scaleUp?.exhaustedBackoff, 1);
  const backoffMax = within(scaleUp?.exhaustedBackoffMax, 1);
  if (backoff !== undefined && backoffMax !== undefined && backoff > backoffMax) {
    issue(ctx, ['scaleUp', 'exhaustedBackoffMax'], 'must not be shorter than scaleUp.exhaustedBackoff');
  }
  const retry = record(root.cloudRetry);
  const baseDelay = within(retry?.baseDelay, 1);
  const maxDelay = within(retry?.maxDelay, 1);
  if (baseDelay !== undefined && maxDelay !== undefined && baseDelay > maxDelay) {
    issue(ctx, ['cloudRetry', 'maxDelay'], 'must not be shorter than cloudRetry.baseDelay');
  }
  const maxAge = within(root.decisionMaxAge, 1);
  const leaseTtl = within(root.leaseTtl, 1);
  if (maxAge !== undefined && leaseTtl !== undefined && maxAge < leaseTtl) {
    issue(ctx, ['decisionMaxAge'], `must not be shorter than leaseTtl (${Math.round(leaseTtl / 1000)}s): a decision is sent again, unchanged, while its lease lasts`);
  }
  const resendAfter = within(root.leaseResendAfter, 1);
  if (resendAfter !== undefined && resendAfter < 5 * 60_000) {
    issue(ctx, ['leaseResendAfter'], 'must be at least 5m: SQS FIFO queues drop a message sent again with the same deduplication id within 5 minutes');
  }
  const legacy = legacyDrainsIssue(scaleDown);
  if (legacy) issue(ctx, ['scaleDown', 'maxConcurrentDrains'], legacy);
  if (low !== undefined && target !== undefined && !(low < target)) {
    issue(ctx, ['scaleDown', 'utilizationThreshold'], `must be below scaleUp.target (${target}), or the pool flaps between scale-up and scale-down`);
  }

  // Handler and platform needs.
  if (handler === 'spool' && !record(root.spool)) {
    issue(ctx, ['spool', 'bucket'], 'handler spool needs spool.bucket');
  }
  if (handler === 'notify' && !record(root.notify)) {
    issue(ctx, ['notify', 'topicArn'], 'handler notify needs notify.topicArn');
  }
  const platform = record(root.platform);
  if (str(platform?.kind) === 'openshift-broker' && platform?.brokerInstanceId === undefined) {
    issue(ctx, ['platform', 'brokerInstanceId'], 'platform openshift-broker needs brokerInstanceId');
  }

  const pools = list(root.pools);
  if (!pools) return;
  const defaultNaming = record(root.naming);
  const seenIds = new Map<string, number>();
  const seenNames = new Map<string, number>();
  let minSum = 0;
  let minCores = 0;
  let minMemory = 0;
  let resourcesKnown = true;

  pools.forEach((entry, index) => {
    const pool = record(entry);
    if (!pool) return;
    const at = (...rest: Path): Path => ['pools', index, ...rest];
    const min = within(pool.min, 0, undefined, true);
    const max = within(pool.max, 1, undefined, true);
    if (min !== undefined && max !== undefined && min > max) {
      issue(ctx, at('min'), `must not exceed max (${max})`);
    }
    if (min !== undefined) minSum += min;

    const district = str(pool.district);
    const profile = str(pool.profile);
    if (district !== undefined && profile !== undefined) {
      const id = poolIdOf(district, profile);
      const first = seenIds.get(id);
      if (first !== undefined) issue(ctx, at(), `duplicate pool ${id} (already pools.${first})`);
      else seenIds.set(id, index);
    }

    // Two pools naming their nodes alike would fight over the same host names.
    const own = record(pool.naming);
    const base = str(own?.base) ?? str(defaultNaming?.base);
    const domain = str(own?.domain) ?? str(defaultNaming?.domain);
    if (base !== undefined && domain !== undefined) {
      const key = `${base}.${domain.toLowerCase()}`;
      const first = seenNames.get(key);
      if (first !== undefined) {
        issue(ctx, at('naming'), `nodes would be named like pools.${first} (${base}-<N>.${domain}); give each pool its own naming.base`);
      } else {
        seenNames.set(key, index);
      }
    }

    const template = record(pool.template);
    const types = list(template?.instanceTypes);
    if (handler === 'ec2' && template) {
      if (template.imageId === undefined && template.launchTemplate === undefined) {
        issue(ctx, at('template', 'imageId'), 'handler ec2 needs an imageId or a launchTemplate');
      }
      if (types && types.length === 0) issue(ctx, at('template', 'instanceTypes'), 'handler ec2 needs at least one instance type');
      const subnets = list(template.subnets);
      if (subnets && subnets.length === 0) issue(ctx, at('template', 'subnets'), 'handler ec2 needs at least one subnet');
    }

    // The least the pool minimums need: min nodes of the smallest instance type.
    if (min !== undefined && min > 0) {
      const sizes = (types ?? []).map(record).filter((t) => t !== undefined);
      const vcpus = sizes.map((t) => within(t.vcpus, 1, undefined, true)).filter((n) => n !== undefined);
      const memory = sizes.map((t) => num(t.memoryGiB)).filter((n): n is number => n !== undefined && n > 0);
      if (vcpus.length === 0 || memory.length === 0) resourcesKnown = false;
      else {
        minCores += min * Math.min(...vcpus);
        minMemory += min * Math.min(...memory);
      }
    }
  });

  const limits = record(root.limits);
  const maxNodes = within(limits?.maxNodesTotal, 1, undefined, true);
  if (maxNodes !== undefined && minSum > maxNodes) {
    issue(ctx, ['limits', 'maxNodesTotal'], `the pool minimums add up to ${minSum} nodes, more than maxNodesTotal (${maxNodes})`);
  }
  const maxCores = within(limits?.maxCores, 1, undefined, true);
  if (resourcesKnown && maxCores !== undefined && minCores > maxCores) {
    issue(ctx, ['limits', 'maxCores'], `the pool minimums need at least ${minCores} cores, more than maxCores (${maxCores})`);
  }
  const maxMemory = num(limits?.maxMemoryGiB);
  if (resourcesKnown && maxMemory !== undefined && minMemory > maxMemory) {
    issue(ctx, ['limits', 'maxMemoryGiB'], `the pool minimums need at least ${minMemory} GiB, more than maxMemoryGiB (${maxMemory})`);
  }
}
