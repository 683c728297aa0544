import { describe, expect, it } from 'vitest';
import { nodePlacement } from '../../lib/domain/placement.js';

const east = { name: 'east', zones: { 'us-east-1a': 'east-a' } };

describe('nodePlacement: the region and zone a joining node is added in', () => {
  it('places nothing for a pool that names no region (the node joins as before)', () => {
    expect(nodePlacement(undefined, 'us-east-1a')).toEqual({ ok: true });
  });

  it('takes the zone the map names for the availability zone', () => {
    expect(nodePlacement(east, 'us-east-1a')).toEqual({ ok: true, placement: { region: 'east', zone: 'east-a' } });
  });

  it('else the default zone, else the availability zone by its own name', () => {
    expect(nodePlacement({ ...east, zone: 'east-z' }, 'us-east-1c')).toEqual({ ok: true, placement: { region: 'east', zone: 'east-z' } });
    expect(nodePlacement(east, 'us-east-1c')).toEqual({ ok: true, placement: { region: 'east', zone: 'us-east-1c' } });
    expect(nodePlacement({ name: 'east', zone: 'east-z' }, undefined)).toEqual({ ok: true, placement: { region: 'east', zone: 'east-z' } });
  });

  it('refuses, with the reason, a node of unknown availability zone when no default zone is set', () => {
    const answer = nodePlacement(east, undefined);
    expect(answer.ok).toBe(false);
    expect(!answer.ok && answer.reason).toContain('set openshiftRegion.zone');
  });
});
