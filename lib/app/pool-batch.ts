/**
 * How the evaluator runs the pools of one batch: several at once, so a pool
 * whose scale-down candidates are checked on the broker (lib/app/move-history.ts:
 * listings are SSM commands of a second or more each) does not hold up the
 * pools after it, a scale-up among them (cluster-autoscaler and Karpenter never
 * let scale-down bookkeeping delay a scale-up either).
 */

/**
 * Pools of one batch evaluated at once. Small and fixed: each pool checking
 * candidates may have one broker command under way, and the broker host also
 * runs the gear mover's moves; four keeps a slow pool or three from holding up
 * the others without putting a batch's every listing on the broker at once.
 */
export const POOLS_AT_ONCE = 4;

/**
 * `run` on every item, at most `limit` at once; the results in the items'
 * order, whatever order they finish in. The first error thrown stops items not
 * yet started, and is thrown once the ones under way have ended: nothing is
 * left running when the invocation returns (Lambda freezes what is).
 */
export async function inOrderAtMost<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failed === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await run(items[index]!);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failed !== undefined) throw failed.error;
  return results;
}

/**
 * Candidate checks stop this long before the invocation's end (the handler's
 * DEADLINE_MARGIN_MS is already off it): time for the pool's own writes (its
 * record, the lease and message, the decision log) and for pools still waiting
 * for a slot, a scale-up among them, to be evaluated at all.
 */
export const CANDIDATE_CHECKS_RESERVE_MS = 10_000;

/**
 * When the batch's candidate checks must stop, as a test on the evaluator's
 * clock: from the time the invocation has left when the batch starts, less
 * CANDIDATE_CHECKS_RESERVE_MS. Undefined without a deadline (a CLI run, the
 * replay): the checks are bounded by their count alone (candidateReads).
 */
export function checksDeadline(clock: { now(): Date }, deadline: { remaining(): number } | undefined): (() => boolean) | undefined {
  const left = deadline?.remaining() ?? Infinity;
  if (!Number.isFinite(left)) return undefined;
  const endsAt = clock.now().getTime() + left - CANDIDATE_CHECKS_RESERVE_MS;
  return () => clock.now().getTime() >= endsAt;
}
