import type { Clock } from '../../ports/clock.js';

/**
 * Simulated time: it moves only when told to, so a 30-day trace replays in
 * seconds and every test sees the same instants.
 */
export class VirtualClock implements Clock {
  private current: number;

  constructor(start: Date | string | number) {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  nowMs(): number {
    return this.current;
  }

  advance(ms: number): Date {
    if (!(ms >= 0)) throw new RangeError(`a virtual clock only moves forward (asked for ${ms} ms)`);
    this.current += ms;
    return this.now();
  }

  /** Jumps to an instant; never backwards. */
  set(to: Date | number): Date {
    return this.advance(new Date(to).getTime() - this.current);
  }
}
