/** `tune --sets`: which sets one ranking replays (lib/sim/tune-sets.ts). */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import { parseTuneSets, tuneSetName } from '../../lib/sim/tune-sets.js';

describe('parseTuneSets', () => {
  it('reads the suite and FAMILY:SEED items in their order', () => {
    const sets = parseTuneSets('suite, mixed:38,wander:6 ,surge:4');
    expect(sets).toEqual([
      { kind: 'suite' },
      { kind: 'heldout', family: 'mixed', seed: 38 },
      { kind: 'heldout', family: 'wander', seed: 6 },
      { kind: 'heldout', family: 'surge', seed: 4 },
    ]);
    expect(sets.map(tuneSetName)).toEqual(['suite', 'mixed:38', 'wander:6', 'surge:4']);
  });

  it.each([
    ['bursts:3', 'bursts:3'],
    ['surge', 'surge'],
    ['surge:x', 'surge:x'],
    ['surge:-1', 'surge:-1'],
    ['surge:1:2', 'surge:1:2'],
    ['suite,', ''],
    ['mixed:1,suite,mixed:01', 'mixed:01'],
  ])('refuses %j, naming --sets and the item %j', (text, item) => {
    let caught: unknown;
    try {
      parseTuneSets(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    const issue = (caught as ValidationError).issues[0]!;
    expect(issue.path).toBe('--sets');
    expect(issue.value).toBe(item);
  });
});
