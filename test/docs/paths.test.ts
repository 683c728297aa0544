/**
 * The documents are kept true to the code: every repository path they name
 * (a source, a test, a script, a trace) exists, so a renamed or deleted file
 * fails here instead of leaving a reader at a dead reference.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOCUMENTS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
// Not config/: the documents name the stage files an operator writes there (config/prod.yml).
const TOP_LEVEL = ['lib', 'functions', 'test', 'scripts', 'infra', 'bin', 'docs', 'events', 'data'];

/** Paths a document names: `lib/...`, `test/...`, ...; a glob (`payoff*.test.ts`) names the files it matches. */
export function namedPaths(text: string): string[] {
  const pattern = new RegExp(`(?<![\\w./-])(?:${TOP_LEVEL.join('|')})/[A-Za-z0-9_.*/-]*[A-Za-z0-9_*/]`, 'g');
  return [...new Set([...text.matchAll(pattern)].map((match) => match[0]))];
}

function exists(path: string): boolean {
  if (!path.includes('*')) return existsSync(join(ROOT, path));
  const directory = dirname(path);
  const name = new RegExp(`^${path.slice(directory.length + 1).replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
  return existsSync(join(ROOT, directory)) && readdirSync(join(ROOT, directory)).some((entry) => name.test(entry));
}

describe('paths named in the documents', () => {
  it('finds paths, globs and directories in text, and not the tail of a longer path', () => {
    expect(namedPaths('see lib/domain/payoff.ts, test/unit/payoff*.test.ts and `lib/adapters/`; not a/lib/x.ts')).toEqual([
      'lib/domain/payoff.ts',
      'test/unit/payoff*.test.ts',
      'lib/adapters/',
    ]);
  });

  it('tells a missing path from an existing one', () => {
    expect(exists('lib/domain/payoff.ts')).toBe(true);
    expect(exists('test/unit/payoff*.test.ts')).toBe(true);
    expect(exists('lib/domain/no-such-file.ts')).toBe(false);
    expect(exists('test/unit/no-such*.test.ts')).toBe(false);
  });

  for (const document of DOCUMENTS) {
    it(`${document} names only paths that exist`, () => {
      const named = namedPaths(readFileSync(join(ROOT, document), 'utf8'));
      expect(named.length).toBeGreaterThan(0);
      expect(named.filter((path) => !exists(path))).toEqual([]);
    });
  }
});
