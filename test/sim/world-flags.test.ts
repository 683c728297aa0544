import { describe, expect, it } from 'vitest';
import { slotsText } from '../../lib/sim/slots-flag.js';
import { worldFromFlags, WORLD_USAGE } from '../../lib/sim/world-flags.js';

describe('the replay world flags', () => {
  it('reads the mix and the placement together, leaving out what was not asked for', () => {
    expect(worldFromFlags({})).toEqual({});
    expect(worldFromFlags({ placement: 'broker' })).toEqual({ placement: 'broker' });
    expect(worldFromFlags({ 'idle-share': '0', placement: 'least-loaded' })).toEqual({ apps: { idleShare: 0, sizeExponent: 2.5 }, placement: 'least-loaded' });
    for (const flag of ['--idle-share', '--app-sizes', '--placement', '--slots']) expect(WORLD_USAGE).toContain(flag);
  });

  it('reads --slots: active counts only active gears in the slots; all is the default, left out', () => {
    expect(worldFromFlags({ slots: 'active', placement: 'broker' })).toEqual({ placement: 'broker', idleTakesNoSlot: true });
    expect(worldFromFlags({ slots: 'all' })).toEqual({});
    expect(() => worldFromFlags({ slots: 'idle' })).toThrow('--slots: expected all or active (got "idle")');
    expect(slotsText(true)).toContain('max_active_gears');
    expect(slotsText(undefined)).toBe('every gear, idle ones too');
  });

  it('refuses either bad value by its flag', () => {
    expect(() => worldFromFlags({ 'idle-share': '2', placement: 'broker' })).toThrow('--idle-share');
    expect(() => worldFromFlags({ 'idle-share': '0.5', placement: 'nearest' })).toThrow('--placement: expected least-loaded or broker (got "nearest")');
  });
});
