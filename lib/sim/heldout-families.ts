import { heldoutShapes, type HeldoutOptions, type HeldoutShape } from './heldout.js';
import { wanderShape } from './heldout-wander.js';

/** The held-out families `heldout` and `tune --heldout` draw from: heldout.ts (`mixed`) and heldout-wander.ts (`wander`). */
export const HELDOUT_FAMILIES = ['mixed', 'wander'] as const;
export type HeldoutFamily = (typeof HELDOUT_FAMILIES)[number];

export function isHeldoutFamily(name: string | undefined): name is HeldoutFamily {
  return (HELDOUT_FAMILIES as readonly string[]).includes(name ?? '');
}

/** `count` shapes of one seed of `family`; shape n is the same whatever `count` is. */
export function familyShapes(family: HeldoutFamily, options: HeldoutOptions): HeldoutShape[] {
  if (family === 'mixed') return heldoutShapes(options);
  return Array.from({ length: options.count }, (_, index) => wanderShape(index, options));
}

/** Where the family's generator lives, for a report's settings. */
export function familySource(family: HeldoutFamily): string {
  return family === 'mixed' ? 'lib/sim/heldout.ts' : 'lib/sim/heldout-wander.ts';
}
