/**
 * vitest setupFile, run before each test file. Workers keep their modules from
 * one file to the next (`isolate: false`), so an SDK client whose prototype one
 * file stubbed with aws-sdk-client-mock would answer the next file's calls with
 * that file's canned replies. aws-sdk-client-mock stubs through sinon's default
 * sandbox; restoring that sandbox when the file ends (after the file's own
 * afterAll hooks, which vitest runs first) leaves no stub behind, whether or
 * not the file restored its mocks itself.
 */
import { createRequire } from 'node:module';
import { afterAll } from 'vitest';

// aws-sdk-client-mock is loaded through its CommonJS entry, and with it sinon's CommonJS build: that module's
// sandbox holds the stubs (sinon's ES build, what `import 'sinon'` gives here, is another module with another sandbox).
const sinon = createRequire(import.meta.url)('sinon') as { restore(): void };

afterAll(() => sinon.restore());
