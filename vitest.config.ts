import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// No test is bounded by wall-clock time: work is bounded by simulated time or
// counts, and a correct run on a busy 2-core machine may take many times longer
// than alone. The limit below only stops a hung run; it fails no slow one.
const HANG_GUARD_MS = 30 * 60_000;
// vitest's default is one worker fewer than the cores: on a 2-core machine one
// file at a time, while many files wait on child processes or dynalite's
// socket. Two workers there took the suite from 590 s to 443 s.
const WORKERS = Math.max(2, availableParallelism() - 1);
// isolate false: each worker keeps its module graph from one file to the next instead of
// loading the AWS SDK and our sources again for every file: the unit files
// went from 112 s to 46 s. What a file changes beyond its modules it undoes
// itself (env stubs and spies undone, servers closed; SDK mocks are restored
// for every file by test/support/sdk-mocks-restored.ts);
// `npm test -- --sequence.shuffle.files` runs the files in another order to check.

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: HANG_GUARD_MS,
    hookTimeout: HANG_GUARD_MS,
    pool: 'forks',
    isolate: false,
    maxWorkers: WORKERS,
    globalSetup: ['test/support/run-environment.ts'],
    setupFiles: ['test/support/sdk-mocks-restored.ts'],
  },
});
