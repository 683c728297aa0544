import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../lib/adapters/local/virtual-clock.js';
import { CANDIDATE_CHECKS_RESERVE_MS, checksDeadline, inOrderAtMost } from '../../lib/app/pool-batch.js';
import { InvocationDeadline } from '../../lib/ports/deadline.js';

/** A promise the test settles by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('inOrderAtMost: several at once, results in order', () => {
  it('runs at most `limit` at once, starts the next as one ends, and keeps the items\' order whatever order they end in', async () => {
    const gates = ['a', 'b', 'c', 'd'].map(() => deferred<void>());
    const started: string[] = [];
    const run = inOrderAtMost(['a', 'b', 'c', 'd'], 2, async (item) => {
      started.push(item);
      await gates['abcd'.indexOf(item)]!.promise;
      return item.toUpperCase();
    });
    await settle();
    expect(started).toEqual(['a', 'b']);
    gates[1]!.resolve(); // b ends first: c starts while a is still under way
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    gates[3]!.resolve();
    gates[2]!.resolve();
    await settle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    gates[0]!.resolve();
    await expect(run).resolves.toEqual(['A', 'B', 'C', 'D']);
  });

  it('an error starts nothing more, and is thrown only once the items under way have ended', async () => {
    const slow = deferred<string>();
    const started: string[] = [];
    let slowEnded = false;
    const run = inOrderAtMost(['slow', 'bad', 'never'], 2, async (item) => {
      started.push(item);
      if (item === 'bad') throw new Error('bad item');
      if (item === 'slow') {
        const value = await slow.promise;
        slowEnded = true;
        return value;
      }
      return item;
    });
    const outcome = run.then(
      () => 'resolved',
      (error: Error) => (slowEnded ? `rejected after slow: ${error.message}` : `rejected early: ${error.message}`),
    );
    await settle();
    slow.resolve('slow');
    expect(await outcome).toBe('rejected after slow: bad item');
    expect(started).toEqual(['slow', 'bad']);
  });

  it('an empty list is no work', async () => {
    await expect(inOrderAtMost([], 4, async () => 1)).resolves.toEqual([]);
  });
});

describe('checksDeadline: from the time the invocation has left, on the evaluator\'s clock', () => {
  it('is reached CANDIDATE_CHECKS_RESERVE_MS before the invocation\'s end', () => {
    const clock = new VirtualClock('2026-11-21T10:00:00Z');
    const deadline = new InvocationDeadline(clock);
    deadline.start(40_000);
    const outOfTime = checksDeadline(clock, deadline)!;
    expect(outOfTime()).toBe(false);
    clock.advance(40_000 - CANDIDATE_CHECKS_RESERVE_MS - 1);
    expect(outOfTime()).toBe(false);
    clock.advance(1);
    expect(outOfTime()).toBe(true);
  });

  it('none without a deadline, or with one the handler never set (a CLI run, the replay)', () => {
    const clock = new VirtualClock('2026-11-21T10:00:00Z');
    expect(checksDeadline(clock, undefined)).toBeUndefined();
    expect(checksDeadline(clock, new InvocationDeadline(clock))).toBeUndefined();
  });
});
