/** Durations as operators write them: `500ms`, `30s`, `10m`, `1h`, `1d`, or compound `1h30m`. */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;

/** Milliseconds for a duration string, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const compact = text.trim();
  if (!WHOLE.test(compact)) return undefined;
  let total = 0;
  for (const [, amount, unit] of compact.matchAll(PART)) total += Number(amount) * UNIT_MS[unit as string]!;
  return Math.round(total);
}

/** The shortest readable form, for logs and decision reasons: 90_000 -> `1m30s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const parts: string[] = [];
  let rest = Math.round(ms);
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNIT_MS[unit]!;
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest > 0) parts.push(`${rest}ms`);
  return parts.join('');
}
