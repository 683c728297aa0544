import type * as z from './zod.js';
import { ValidationError, type ValidationIssue } from './errors.js';

/** Every zod issue as a `ValidationIssue` with its path and the value found there. */
export function issuesFromZod(error: z.core.$ZodError, input: unknown): ValidationIssue[] {
  return issuesWithValues(error.issues, input);
}

/** Issues found in `input` (a path of keys and indexes, a message) as `ValidationIssue`s with the value found there. */
export function issuesWithValues(issues: ReadonlyArray<{ path: readonly PropertyKey[]; message: string }>, input: unknown): ValidationIssue[] {
  return issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const found = valueAt(input, issue.path);
    return found.present ? { path, message: issue.message, value: found.value } : { path, message: issue.message };
  });
}

/** Parse with a schema, or throw one `ValidationError` listing every problem. */
export function parseWith<S extends z.ZodMiniType>(schema: S, input: unknown, context: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ValidationError(issuesFromZod(result.error, input), context);
}

function valueAt(input: unknown, path: readonly PropertyKey[]): { present: boolean; value?: unknown } {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return { present: false };
    if (!Object.prototype.hasOwnProperty.call(current, key)) return { present: false };
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return { present: true, value: current };
}

/** `required` instead of zod's `expected number, received undefined` for a missing key. */
export function requiredMessage(issue: z.core.$ZodRawIssue): string | undefined {
  return issue.code === 'invalid_type' && issue.input === undefined ? 'required' : undefined;
}
