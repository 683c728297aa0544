/** The flags every replay bench takes for the world it replays in: the applications' mix, where new gears go and which gears hold slots. */
import type { PlacementRule } from '../adapters/local/sim-placement.js';
import { APP_MIX_OPTIONS, APP_MIX_USAGE, appMixFromFlags } from './app-mix.js';
import type { AppMix } from './disruption.js';
import { PLACEMENT_OPTIONS, PLACEMENT_USAGE, placementFromFlags } from './placement-flag.js';
import { idleTakesNoSlotFromFlags, SLOTS_OPTIONS, SLOTS_USAGE } from './slots-flag.js';

export const WORLD_OPTIONS = { ...APP_MIX_OPTIONS, ...PLACEMENT_OPTIONS, ...SLOTS_OPTIONS } as const;

export const WORLD_USAGE = `${APP_MIX_USAGE}\n${PLACEMENT_USAGE}\n${SLOTS_USAGE}`;

export interface WorldFlags {
  /** Undefined: the traces keep their own mix. */
  apps?: AppMix;
  /** Undefined: the least-loaded node. */
  placement?: PlacementRule;
  /** True: idle gears hold no slot (`--slots active`); undefined: every gear holds one. */
  idleTakesNoSlot?: true;
}

/** What `--idle-share`, `--app-sizes`, `--placement` and `--slots` ask for. Throws a ValidationError naming the flag and its value. */
export function worldFromFlags(flags: { 'idle-share'?: string | undefined; 'app-sizes'?: string | undefined; placement?: string | undefined; slots?: string | undefined }): WorldFlags {
  const apps = appMixFromFlags(flags);
  const placement = placementFromFlags(flags);
  const idleTakesNoSlot = idleTakesNoSlotFromFlags(flags);
  return { ...(apps ? { apps } : {}), ...(placement ? { placement } : {}), ...(idleTakesNoSlot ? { idleTakesNoSlot } : {}) };
}
