import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ValidationError, type ValidationIssue } from '../../lib/errors.js';
import { parseConfig } from '../../lib/config/index.js';

export const EXAMPLE = resolve(process.cwd(), 'infra/nodescaler.example.yml');

/** The smallest valid configuration, with overrides merged in at the top level. */
export function minimal(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { pools: [{ district: 'd1', profile: 'small', max: 5 }], ...overrides };
}

/** Two pools that do not collide, for rules about several pools. */
export function twoPools(...extra: Record<string, unknown>[]): Record<string, unknown>[] {
  return [
    { district: 'd1', profile: 'small', max: 5, naming: { base: 'small' }, ...extra[0] },
    { district: 'd1', profile: 'medium', max: 5, naming: { base: 'medium' }, ...extra[1] },
  ];
}

export function failure(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError, nothing was thrown');
}

export function issuesOf(input: unknown): ValidationIssue[] {
  return [...failure(() => parseConfig(input)).issues];
}

export function paths(input: unknown): string[] {
  return issuesOf(input).map((issue) => issue.path);
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'nodescaler-config-'));
}
