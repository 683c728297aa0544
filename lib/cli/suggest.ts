/** "Did you mean": the known name a mistyped one most likely meant. */

/** The closest of `known` to `input`: same letters in another case, a prefix, or at most two edits away (fewer for short names). */
export function closestName(input: string, known: readonly string[]): string | undefined {
  const lower = input.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const candidate = name.toLowerCase();
    const distance = candidate === lower ? 0 : candidate.startsWith(lower) && lower.length >= 3 ? 1 : editDistance(lower, candidate);
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= Math.max(1, Math.min(2, Math.floor(input.length / 3))) ? best.name : undefined;
}

/** Edits (insert, delete, replace, swap of two neighbours) from `a` to `b`: optimal string alignment. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
