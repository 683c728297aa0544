/**
 * The benches' side of the application mix (lib/sim/disruption.ts): the
 * flags that ask for another mix, and traces loaded with it.
 */
import { ValidationError } from '../errors.js';
import { appMixText, DEFAULT_APP_MIX, type AppMix } from './disruption.js';

/** The flags every replay bench takes for the applications' mix (read by `appMixFromFlags`). */
export const APP_MIX_USAGE = `  --idle-share F      share of applications that are idle, whose gears move without restarting anything
                      (default ${DEFAULT_APP_MIX.idleShare}), for every policy
  --app-sizes E       application sizes 1..10 drawn with weight size^-E (default ${DEFAULT_APP_MIX.sizeExponent}: ${appMixText(DEFAULT_APP_MIX).replace(/.*\((.*)\)/, '$1')};
                      1: more scaled applications, whose gears have siblings; 5: nearly all single-gear)`;

export const APP_MIX_OPTIONS = { 'idle-share': { type: 'string' }, 'app-sizes': { type: 'string' } } as const;

/**
 * The mix the bench flags `--idle-share F` and `--app-sizes EXPONENT` ask for, the default's for a flag left out;
 * undefined when both are (the traces keep their own). Throws a ValidationError naming the flag and its value.
 */
export function appMixFromFlags(flags: { 'idle-share'?: string | undefined; 'app-sizes'?: string | undefined }): AppMix | undefined {
  const idle = flags['idle-share'];
  const sizes = flags['app-sizes'];
  if (idle === undefined && sizes === undefined) return undefined;
  const idleShare = idle === undefined ? DEFAULT_APP_MIX.idleShare : Number(idle);
  if (idle !== undefined && (idle.trim() === '' || !(idleShare >= 0 && idleShare <= 1))) {
    throw new ValidationError({ path: '--idle-share', message: 'expected the share of idle applications, from 0 to 1', value: idle });
  }
  const sizeExponent = sizes === undefined ? DEFAULT_APP_MIX.sizeExponent : Number(sizes);
  if (sizes !== undefined && (sizes.trim() === '' || !(sizeExponent >= 0 && sizeExponent <= 20))) {
    throw new ValidationError({ path: '--app-sizes', message: 'expected the exponent of application sizes, from 0 (every size 1..10 alike) to 20', value: sizes });
  }
  return { idleShare, sizeExponent };
}

/** `load` with every trace it returns given `mix` (unchanged without one). */
export function loadWithAppMix<T extends { apps?: AppMix }>(load: () => T, mix: AppMix | undefined): () => T {
  return mix === undefined ? load : () => ({ ...load(), apps: mix });
}

/** `POOL=IDLE` or `POOL=IDLE:EXPONENT`, as `npm start -- --pool-apps` takes it: one pool's own mix, the default's exponent when left out. */
export function parsePoolApps(text: string): { pool: string; apps: AppMix } {
  const at = text.lastIndexOf('=');
  if (at <= 0 || at === text.length - 1) throw new ValidationError({ path: '--pool-apps', message: 'expected DISTRICT/PROFILE=IDLE_SHARE or DISTRICT/PROFILE=IDLE_SHARE:SIZE_EXPONENT', value: text });
  const [idle, sizes, extra] = text.slice(at + 1).split(':');
  if (extra !== undefined) throw new ValidationError({ path: '--pool-apps', message: 'expected DISTRICT/PROFILE=IDLE_SHARE or DISTRICT/PROFILE=IDLE_SHARE:SIZE_EXPONENT', value: text });
  try {
    return { pool: text.slice(0, at), apps: appMixFromFlags({ 'idle-share': idle, 'app-sizes': sizes })! };
  } catch (error) {
    const reason = error instanceof ValidationError ? error.issues[0]!.message : String(error);
    throw new ValidationError({ path: '--pool-apps', message: reason, value: text });
  }
}
