import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import { placementFromFlags, placementText } from '../../lib/sim/placement-flag.js';

describe('--placement', () => {
  it('names the rule, or leaves the default when left out', () => {
    expect(placementFromFlags({})).toBeUndefined();
    expect(placementFromFlags({ placement: 'broker' })).toBe('broker');
    expect(placementFromFlags({ placement: 'least-loaded' })).toBe('least-loaded');
    expect(placementText(undefined)).toBe('the least-loaded node');
    expect(placementText('broker')).toContain('select_best_fit_node');
  });

  it('refuses another rule, naming the flag and the value', () => {
    const error = (() => {
      try {
        placementFromFlags({ placement: 'Broker' });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe('--placement: expected least-loaded or broker (got "Broker")');
  });
});
