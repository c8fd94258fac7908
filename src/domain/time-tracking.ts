// PROVISIONAL: the `issuable` branch brings the full time-tracking module (parsing too).
const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['mo', 4 * 5 * 8 * 3600],
  ['w', 5 * 8 * 3600],
  ['d', 8 * 3600],
  ['h', 3600],
  ['m', 60],
  ['s', 1],
];

/** Gitlab::TimeTrackingFormatter.output: ChronicDuration's short format with 8-hour days, 5-day weeks, 4-week months; 0 is null. */
export function formatTimeTracking(seconds: number): string | null {
  if (seconds === 0) return null;
  let rest = Math.abs(seconds);
  const parts: string[] = [];
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return `${seconds < 0 ? '-' : ''}${parts.join(' ')}`;
}
