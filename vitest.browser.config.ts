import { defineConfig } from 'vitest/config';

// `npm run test:browser`: pages checked in a real headless Chromium (Debian's
// chromium package). Separate from `npm test`, which needs no browser.
export default defineConfig({
  test: {
    include: ['test/browser/**/*.browser.ts'],
    environment: 'node',
    testTimeout: 30 * 60_000,
    hookTimeout: 30 * 60_000,
    pool: 'forks',
    globalSetup: ['test/support/run-environment.ts'],
  },
});
