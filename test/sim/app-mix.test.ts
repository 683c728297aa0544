import { describe, expect, it } from 'vitest';
import { appMixFromFlags, loadWithAppMix, parsePoolApps } from '../../lib/sim/app-mix.js';
import { DEFAULT_APP_MIX, appMixText } from '../../lib/sim/disruption.js';
import { ValidationError } from '../../lib/errors.js';

describe('the application mix of a bench run', () => {
  it('is undefined without the flags, and the default for a flag left out', () => {
    expect(appMixFromFlags({})).toBeUndefined();
    expect(appMixFromFlags({ 'idle-share': '0' })).toEqual({ idleShare: 0, sizeExponent: DEFAULT_APP_MIX.sizeExponent });
    expect(appMixFromFlags({ 'app-sizes': '1.5' })).toEqual({ idleShare: DEFAULT_APP_MIX.idleShare, sizeExponent: 1.5 });
    expect(appMixText(DEFAULT_APP_MIX)).toBe('idle 30 %, sizes ^-2.5 (76 % single-gear)');
  });

  it.each([
    ['idle-share', '1.5'],
    ['idle-share', '-0.1'],
    ['idle-share', 'half'],
    ['idle-share', ''],
    ['app-sizes', '-1'],
    ['app-sizes', '21'],
    ['app-sizes', 'steep'],
  ] as const)('refuses --%s %j, naming the flag and the value', (flag, value) => {
    const attempt = () => appMixFromFlags({ [flag]: value });
    expect(attempt).toThrow(ValidationError);
    expect(attempt).toThrow(`--${flag}`);
    expect(attempt).toThrow(JSON.stringify(value));
  });

  it('gives every trace a load returns the mix, and leaves the load alone without one', () => {
    const load = () => ({ source: 'x.csv' as string, apps: undefined as { idleShare: number; sizeExponent: number } | undefined });
    expect(loadWithAppMix(load, undefined)).toBe(load);
    expect(loadWithAppMix(load, { idleShare: 0, sizeExponent: 1 })()).toEqual({ source: 'x.csv', apps: { idleShare: 0, sizeExponent: 1 } });
  });
});

describe("one pool's mix (npm start -- --config FILE --pool-apps POOL=F[:E])", () => {
  it('takes an idle share, and a size exponent after a colon', () => {
    expect(parsePoolApps('d1/paid=0')).toEqual({ pool: 'd1/paid', apps: { idleShare: 0, sizeExponent: DEFAULT_APP_MIX.sizeExponent } });
    expect(parsePoolApps('d1/paid=0:5')).toEqual({ pool: 'd1/paid', apps: { idleShare: 0, sizeExponent: 5 } });
  });

  it.each(['d1/paid', 'd1/paid=', '=0.3', 'd1/paid=1.5', 'd1/paid=0:-1', 'd1/paid=0:5:1', 'd1/paid=:2'])('refuses %j, naming the flag and the value', (text) => {
    const attempt = () => parsePoolApps(text);
    expect(attempt).toThrow(ValidationError);
    expect(attempt).toThrow(`--pool-apps: `);
    expect(attempt).toThrow(JSON.stringify(text));
  });
});
