import { describe, it, expect } from 'vitest';
import { formatDuration, parseDuration } from '../../lib/domain/duration.js';

describe('parseDuration', () => {
  it('reads single units', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('14d')).toBe(14 * 86_400_000);
    expect(parseDuration('0s')).toBe(0);
  });

  it('reads compound and fractional durations', () => {
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration('1d2h3m4s5ms')).toBe(86_400_000 + 2 * 3_600_000 + 3 * 60_000 + 4_000 + 5);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('  2m ')).toBe(120_000);
  });

  it('rejects what is not a duration', () => {
    for (const text of ['', '10', 'm', '10x', '-5s', '1h 30m', 'ten minutes', '5 m', '1.h']) {
      expect(parseDuration(text), text).toBeUndefined();
    }
  });
});

describe('formatDuration', () => {
  it('writes the shortest readable form', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(500)).toBe('500ms');
    expect(formatDuration(30_000)).toBe('30s');
    expect(formatDuration(90_000)).toBe('1m30s');
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(86_400_001)).toBe('1d1ms');
  });

  it('round-trips through parseDuration', () => {
    for (const ms of [1, 999, 1_000, 61_000, 3_599_999, 86_400_000, 1_209_600_000]) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
  });
});
