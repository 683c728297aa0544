/** The benches' `--placement` flag: where the simulated broker puts new gears, for nodescaler and every baseline. */
import type { PlacementRule } from '../adapters/local/sim-placement.js';
import { ValidationError } from '../errors.js';

export const PLACEMENT_USAGE = `  --placement RULE    where the broker puts a new gear: least-loaded (default: the emptiest node) or broker
                      (origin-server's rule: a weighted draw among the nodes at most about average-full,
                      away from the application's other gears), for every policy`;

export const PLACEMENT_OPTIONS = { placement: { type: 'string' } } as const;

const RULES: readonly PlacementRule[] = ['least-loaded', 'broker'];

/** The rule `--placement` names; undefined when left out. Throws a ValidationError naming the flag and its value. */
export function placementFromFlags(flags: { placement?: string | undefined }): PlacementRule | undefined {
  const text = flags.placement;
  if (text === undefined) return undefined;
  if (!(RULES as readonly string[]).includes(text)) throw new ValidationError({ path: '--placement', message: `expected ${RULES.join(' or ')}`, value: text });
  return text as PlacementRule;
}

/** The settings tables' text for a rule. */
export function placementText(rule: PlacementRule | undefined): string {
  return rule === 'broker' ? "the broker's (origin-server's select_best_fit_node)" : 'the least-loaded node';
}
