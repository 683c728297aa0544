/** Builders and checks for message tests: the sample bodies in events/messages, and a parse result's verdict. */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import type { ParsedMessage, ParseResult } from '../../lib/messages/index.js';

export const SAMPLES = new URL('../../events/messages/', import.meta.url);

export function sampleText(name: string): string {
  return readFileSync(new URL(name, SAMPLES), 'utf8');
}

export function sample(name: string): Record<string, unknown> {
  return JSON.parse(sampleText(name)) as Record<string, unknown>;
}

export function accepted(result: ParseResult): ParsedMessage {
  if (!result.ok) throw new Error(`expected the message to be accepted, got: ${result.error.message}`);
  return result.message;
}

export function rejected(result: ParseResult): ValidationError {
  if (result.ok) throw new Error(`expected the message to be rejected, got ${JSON.stringify(result.message)}`);
  expect(result.error).toBeInstanceOf(ValidationError);
  expect(result.error.retryable).toBe(false);
  return result.error;
}

export const paths = (error: ValidationError): string[] => error.issues.map((issue) => issue.path);

export const nodeStats = (): Record<string, unknown> => sample('node-stats.json');
export const scaleUp = (): Record<string, unknown> => sample('scale-up.json');
export const scaleDown = (): Record<string, unknown> => sample('scale-down.json');
export const drainComplete = (): Record<string, unknown> => sample('drain-complete.json');
