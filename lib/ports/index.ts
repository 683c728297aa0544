export type * from './state-store.js';
export type * from './queue.js';
export type * from './cloud.js';
export type * from './platform.js';
export type * from './dns.js';
export type * from './metrics.js';
export type * from './clock.js';
export { systemClock } from './clock.js';
export { InMemoryMetrics } from './metrics.js';
