/** The benches' `--slots` flag: which gears hold a node's slots, for nodescaler and every baseline. */
import { ValidationError } from '../errors.js';

export const SLOTS_USAGE = `  --slots WHICH       which gears hold a node's slots: all (default: every gear, idle ones too) or active
                      (origin-server's count: max_active_gears bounds only active gears; idle ones hold
                      none, drains still move them), for every policy`;

export const SLOTS_OPTIONS = { slots: { type: 'string' } } as const;

const CHOICES = ['all', 'active'] as const;

/** True when `--slots active` asks idle gears to hold no slot; undefined when left out or `all`. Throws a ValidationError naming the flag and its value. */
export function idleTakesNoSlotFromFlags(flags: { slots?: string | undefined }): true | undefined {
  const text = flags.slots;
  if (text === undefined || text === 'all') return undefined;
  if (text === 'active') return true;
  throw new ValidationError({ path: '--slots', message: `expected ${CHOICES.join(' or ')}`, value: text });
}

/** The settings tables' text. */
export function slotsText(idleTakesNoSlot: boolean | undefined): string {
  return idleTakesNoSlot ? "active gears only (origin-server's max_active_gears; idle gears hold none)" : 'every gear, idle ones too';
}
