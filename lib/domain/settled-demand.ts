/**
 * The demand of a minute that has ended, as the pool's nodes measured it.
 *
 * The evaluator records a pool's demand once per evaluation, as the sum of its
 * nodes' newest reports. A minute's reports reach it over several SQS batches
 * (ten messages each in the replay; spread over the minute on AWS, where each
 * agent's timer has its own phase), and the evaluation runs on the first: most
 * nodes are still counted at the minute before. Where demand wiggles from
 * minute to minute, the sum mixes two minutes and a one-minute crest is
 * recorded cut by about half (session 50: u18-5's hourly highest up to 170
 * gears under the minute's). Every rise the headroom measures and every night
 * a drain reads from the kept days was read off those cut crests.
 *
 * By the next minute each node has reported the minute past, so its figure
 * then is known: the newest of its two kept reports dated within or before that
 * minute. The evaluator records it over the sample it wrote while the minute
 * was under way.
 */
import { epochMinute, recordDemand, type RecordDemandOptions } from './forecast.js';
import type { DemandSample, NodeRecord } from './model.js';
import { atOrAfterTest, holdsDemand } from './utilization.js';

const MINUTE_MS = 60_000;

/**
 * The pool's demand at the end of epoch minute `minute`: for each active or
 * draining node, its newest report measured before that minute ended (its
 * newest report, else the one before), summed. Undefined when a node has
 * neither (it joined since, reported twice since, or its prior is not kept):
 * what the minute held is not known, and the sample recorded then stands.
 */
export function settledDemand(nodes: readonly NodeRecord[], minute: number): number | undefined {
  const measuredSince = atOrAfterTest((minute + 1) * MINUTE_MS);
  let demand = 0;
  for (const node of nodes) {
    const stats = node.stats;
    if (!stats || !holdsDemand(node.state)) continue;
    if (!measuredSince(stats.reportedAt)) demand += stats.activeGears;
    else if (stats.prior !== undefined && !measuredSince(stats.prior.reportedAt)) demand += stats.prior.activeGears;
    else return undefined;
  }
  return demand;
}

/**
 * The history with the minute before `now` recorded as its nodes measured it
 * (`settledDemand`, over the sample written while it was under way; left as it
 * was when that is not known), then
 * `demand` at `now`'s minute (the newest reports: the best figure of a minute
 * still under way).
 */
export function recordMinutes(
  history: readonly DemandSample[] | undefined,
  nodes: readonly NodeRecord[],
  now: Date,
  demand: number,
  options: RecordDemandOptions,
): DemandSample[] {
  const previous = epochMinute(now) - 1;
  const settled = settledDemand(nodes, previous);
  const revised = settled === undefined ? history : recordDemand(history, new Date(previous * MINUTE_MS), settled, options);
  return recordDemand(revised, now, demand, options);
}
