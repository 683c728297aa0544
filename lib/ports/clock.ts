/** Time, injected so the simulator and the tests can run a virtual clock. Never throws. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
