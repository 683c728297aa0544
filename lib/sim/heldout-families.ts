import { heldoutShapes, type HeldoutOptions, type HeldoutShape, type ShapeOptions } from './heldout.js';
import { shiftShape } from './heldout-shift.js';
import { surgeShape } from './heldout-surge.js';
import { wanderShape } from './heldout-wander.js';

/**
 * The held-out families `heldout` and `tune --heldout` draw from: heldout.ts (`mixed`), heldout-wander.ts (`wander`),
 * heldout-surge.ts (`surge`) and heldout-shift.ts (`shift`).
 */
export const HELDOUT_FAMILIES = ['mixed', 'wander', 'surge', 'shift'] as const;
export type HeldoutFamily = (typeof HELDOUT_FAMILIES)[number];

/** The minute-by-minute families' shape generators: shape `index` of a seed, alone. */
const MINUTE_FAMILIES: Record<Exclude<HeldoutFamily, 'mixed'>, (index: number, options: ShapeOptions) => HeldoutShape> = {
  wander: wanderShape,
  surge: surgeShape,
  shift: shiftShape,
};

const SHAPES_LABELS: Record<HeldoutFamily, string> = { mixed: 'shapes', wander: 'wandering shapes', surge: 'surging shapes', shift: 'shifting shapes' };

export function isHeldoutFamily(name: string | undefined): name is HeldoutFamily {
  return (HELDOUT_FAMILIES as readonly string[]).includes(name ?? '');
}

/** The families as an error message lists them: `mixed, wander, surge or shift`. */
export function heldoutFamilyList(): string {
  return `${HELDOUT_FAMILIES.slice(0, -1).join(', ')} or ${HELDOUT_FAMILIES.at(-1)}`;
}

/** `count` shapes of one seed of `family`; shape n is the same whatever `count` is. */
export function familyShapes(family: HeldoutFamily, options: HeldoutOptions): HeldoutShape[] {
  if (family === 'mixed') return heldoutShapes(options);
  const shape = MINUTE_FAMILIES[family];
  return Array.from({ length: options.count }, (_, index) => shape(index, options));
}

/** Where the family's generator lives, for a report's settings. */
export function familySource(family: HeldoutFamily): string {
  return family === 'mixed' ? 'lib/sim/heldout.ts' : `lib/sim/heldout-${family}.ts`;
}

/** How a report titles the family's shapes: `wandering shapes`, `surging shapes`, `shifting shapes`, or just `shapes`. */
export function familyShapesLabel(family: HeldoutFamily): string {
  return SHAPES_LABELS[family];
}
