import { describe, expect, it } from 'vitest';
import { formatTimeTracking, parseTimeTracking } from '../../src/domain/time-tracking.js';

describe('parseTimeTracking (Gitlab::TimeTrackingFormatter.parse)', () => {
  it.each([
    // The examples.
    ['1h30m', 5400],
    ['1h 30m', 5400],
    ['3w1d', 460_800],
    ['1.5h', 5400],
    ['1d', 28_800],
    ['1w', 144_000],
    ['1mo', 576_000],
    // A bare number is hours.
    ['3', 10_800],
    ['0.5', 1800],
    // GitLab's spec/lib/gitlab/time_tracking_formatter_spec.rb and the patch's spec.
    ['3h 20m', 12_000],
    ['-3h 20m', -12_000],
    ['-1h', -3600],
    // ChronicDuration's words, case, join words and commas.
    ['2 hours 30 minutes', 9000],
    ['1 Day and 2 Hours', 36_000],
    ['1h, 30m', 5400],
    ['30s', 30],
    ['1 sec', 1],
    ['2 wks', 288_000],
    ['1y', 31_557_600],
    // A unit first counts one of it; a number last is hours.
    ['h 30m', 5400],
    ['1d 2', 36_000],
    // The clock form counts from seconds up.
    ['1:30', 90],
    ['1:00:00', 3600],
    ['1:00:00:00', 28_800],
    // Fractions of a second are truncated as the integer column stores them.
    ['1.1h', 3960],
    ['0.3s', 0],
  ])('%s → %s', (text, seconds) => {
    expect(parseTimeTracking(text)).toBe(seconds);
  });

  it.each([
    ['', 'nothing'],
    ['0', 'zero (ChronicDuration answers nil)'],
    ['0h', 'zero with a unit'],
    ['-', 'a sign alone'],
    ['foo', 'an unknown word (raise_exceptions is on in GitLab)'],
    ['1 banana', 'a duration and an unknown word'],
    ['1h-30m', 'an inner minus'],
    ['--1h', 'a double minus'],
    ['1h , 30m', 'a lone comma'],
    ['1:2:3:4:5:6:7', 'a clock form longer than years'],
    ['one hour', 'number words (Numerizer, not reproduced)'],
    ['1.', 'a dot after a number'],
  ])('%j is refused (%s)', (text) => {
    expect(parseTimeTracking(text)).toBeUndefined();
  });
});

describe('formatTimeTracking (Gitlab::TimeTrackingFormatter.output)', () => {
  it.each([
    [5400, '1h 30m'],
    [28_800, '1d'],
    [460_800, '3w 1d'],
    [576_000, '1mo'],
    [12_000, '3h 20m'],
    // GitLab's spec: 178800 → '1w 1d 1h 40m' (time_tracking_limit_to_hours off).
    [178_800, '1w 1d 1h 40m'],
    [59, '59s'],
    [60, '1m'],
    [3661, '1h 1m 1s'],
    [144_000, '1w'],
    [1_152_000, '2mo'],
    [1_584_000, '2mo 3w'],
    // Negative amounts: the gem's minute branch needs >= 60, so they stay in seconds.
    [-3600, '-3600s'],
    [-30, '-30s'],
    // From a year on, the gem's year branch (30-day months, no weeks).
    [31_557_600, '1y'],
  ])('%s → %s', (seconds, text) => {
    expect(formatTimeTracking(seconds)).toBe(text);
  });

  it('answers null for zero', () => {
    expect(formatTimeTracking(0)).toBeNull();
  });

  it('reads back what it prints below a year', () => {
    for (const seconds of [1, 59, 61, 5400, 28_799, 28_800, 143_999, 460_800, 576_000, 1_000_000, 31_557_599]) {
      expect(parseTimeTracking(formatTimeTracking(seconds)!)).toBe(seconds);
    }
  });
});
