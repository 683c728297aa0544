/**
 * Where origin-server's broker puts a new gear, as its code does it
 * (plugins/msg-broker/mcollective: `find_all_available_impl`, then
 * `select_best_fit_node_impl`), not the least-loaded node the simulator
 * assumed for 44 sessions:
 *
 * 1. A gear of an application that already has gears (a scale-up) avoids the
 *    nodes hosting them (`existing_gears_hosting`). When every candidate hosts
 *    some, only those hosting the fewest stay.
 * 2. Of more than 4 candidates, only those whose consumed capacity (percent of
 *    `max_active_gears`) is at most the average plus `1 - average/100` stay.
 *    The code's comment promises at least max(4, 20 %) of them, but Ruby's
 *    `delete_if` reads the array's length before any deletion, so that guard
 *    never holds one back: what stays is exactly those at or below the cut-off.
 * 3. One of them at random, weighted toward the most available: weights
 *    round(n/2), round(n/2) + 1, … from the fullest to the emptiest (3 : 1 for
 *    many nodes).
 *
 * Left out: the district step between 2 and 3, which in a district less than
 * half full keeps every node (and in a fuller one drops an arbitrary fifth),
 * and regions and zones, which the replay's pools do not use.
 */

/** A node that could take the gear: active, in its district, with room. */
export interface PlacementCandidate<N> {
  node: N;
  /** Ties are broken by this number (any order fixed for the node), so a seeded run chooses the same. */
  id: number;
  /** Gears (and moves in flight towards it) over its capacity, in percent. */
  consumedPercent: number;
  /** Gears of the new gear's application it already holds. */
  appGears: number;
}

/**
 * The broker's choice among `candidates` (each with room), or undefined when there are none.
 * `fewestAppGearsHosting`: the fewest gears of the application on any node that hosts some, candidates or not (full
 * nodes count, as the broker's list of hosting nodes has them); undefined when the application has no gear yet.
 */
export function chooseAsBroker<N>(candidates: ReadonlyArray<PlacementCandidate<N>>, random: () => number, fewestAppGearsHosting?: number): N | undefined {
  let servers = withoutAppHosts(candidates, fewestAppGearsHosting);
  if (servers.length > 4) {
    const average = servers.reduce((sum, server) => sum + server.consumedPercent, 0) / servers.length;
    const cutOff = average + (1 - average / 100);
    servers = servers.filter((server) => server.consumedPercent <= cutOff);
  }
  if (servers.length === 0) return undefined;
  // The draw names a position in the fullest-first order; only that one server is needed, not the whole order.
  const ordered = servers === candidates ? [...servers] : (servers as Array<PlacementCandidate<N>>);
  return nthFullest(ordered, weightedIndex(ordered.length, random)).node;
}

/** Fuller first, then the lower id: the broker sorts by consumed capacity (its ties fall as its sort leaves them). */
function fullerFirst(a: PlacementCandidate<unknown>, b: PlacementCandidate<unknown>): number {
  return b.consumedPercent - a.consumedPercent || a.id - b.id;
}

/** The element at `position` of `list` ordered by fullerFirst (quickselect: a placement per gear sorted 200 nodes). Reorders `list`. */
function nthFullest<N>(list: Array<PlacementCandidate<N>>, position: number): PlacementCandidate<N> {
  let low = 0;
  let high = list.length - 1;
  while (low < high) {
    const pivot = list[(low + high) >> 1]!;
    let i = low;
    let j = high;
    while (i <= j) {
      while (fullerFirst(list[i]!, pivot) < 0) i++;
      while (fullerFirst(list[j]!, pivot) > 0) j--;
      if (i <= j) {
        [list[i], list[j]] = [list[j]!, list[i]!];
        i++;
        j--;
      }
    }
    if (position <= j) high = j;
    else if (position >= i) low = i;
    else break;
  }
  return list[position]!;
}

/** Step 1: the candidates left once nodes hosting the application's gears are set aside. */
function withoutAppHosts<N>(candidates: ReadonlyArray<PlacementCandidate<N>>, fewestAppGearsHosting: number | undefined): ReadonlyArray<PlacementCandidate<N>> {
  if (fewestAppGearsHosting === undefined || candidates.length <= 1) return candidates;
  if (candidates.every((candidate) => candidate.appGears > 0)) {
    // Every candidate hosts some: the ones above the fewest any hosting node holds are set aside. Where a full node
    // holds fewer than every candidate, that leaves none and the broker refuses the scale-up; the replay's world would
    // hold every later gear behind the refused one, so it keeps the candidates instead.
    const kept = candidates.filter((candidate) => candidate.appGears <= fewestAppGearsHosting);
    return kept.length > 0 ? kept : candidates;
  }
  return candidates.filter((candidate) => candidate.appGears === 0);
}

/**
 * `select_best_fit_node_impl`'s weighted draw over `count` servers ordered fullest first: position i has weight
 * round(count/2) + i, drawn with the broker's own closed form.
 */
export function weightedIndex(count: number, random: () => number): number {
  const skew = Math.round(count / 2);
  const weightsSum = Math.floor((count / 2) * (count - 1) + skew * count);
  const position = Math.floor(random() * weightsSum);
  const index = Math.floor(0.5 - skew + Math.sqrt((skew - 0.5) ** 2 + 2 * position));
  return Math.min(count - 1, Math.max(0, index));
}
