/**
 * The sets one `npm run bench -- tune --sets` replays together: the suite and
 * held-out families at chosen seeds, so a variant is judged on all of them in
 * one ranking, with the checks it gained and lost named trace by trace, not
 * set by set in separate runs whose totals hide the trades.
 */
import { ValidationError } from '../errors.js';
import { heldoutFamilyList, isHeldoutFamily, type HeldoutFamily } from './heldout-families.js';

export type TuneSet = { kind: 'suite' } | { kind: 'heldout'; family: HeldoutFamily; seed: number };

/**
 * `suite` and `FAMILY:SEED` items, comma-separated (e.g. `suite,mixed:38,surge:4`), in order and each once. Throws a
 * ValidationError naming `--sets` and the item that is not one.
 */
export function parseTuneSets(text: string): TuneSet[] {
  const items = text.split(',').map((item) => item.trim());
  const sets: TuneSet[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const [family, seedText, ...rest] = item.split(':');
    let set: TuneSet;
    if (item === 'suite') set = { kind: 'suite' };
    else if (isHeldoutFamily(family) && rest.length === 0 && /^\d+$/.test(seedText ?? '')) set = { kind: 'heldout', family, seed: Number(seedText) };
    else throw new ValidationError({ path: '--sets', message: `expected suite or FAMILY:SEED items separated by commas (FAMILY ${heldoutFamilyList()}, SEED a whole number)`, value: item });
    const key = tuneSetName(set);
    if (seen.has(key)) throw new ValidationError({ path: '--sets', message: 'each set once', value: item });
    seen.add(key);
    sets.push(set);
  }
  return sets;
}

export function tuneSetName(set: TuneSet): string {
  return set.kind === 'suite' ? 'suite' : `${set.family}:${set.seed}`;
}
