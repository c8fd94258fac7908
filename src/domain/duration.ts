/**
 * Human durations as GitLab reads them with ChronicDuration (raising on what it cannot
 * read): "1 day", "2 weeks 3 days", "1h 30m", "30 days", a bare number of seconds.
 * Months are 30 days and years 365.25, as ChronicDuration counts them.
 *
 * Not a library: parse-duration (the well-kept one) reads "1 day banana" as a day, where
 * ChronicDuration refuses it, and counts a month as 30.44 days.
 */
const UNIT_SECONDS: ReadonlyArray<readonly [RegExp, number]> = [
  [/^(s|secs?|seconds?)$/, 1],
  [/^(m|mins?|minutes?)$/, 60],
  [/^(h|hrs?|hours?)$/, 3600],
  [/^(d|days?)$/, 86400],
  [/^(w|wks?|weeks?)$/, 7 * 86400],
  [/^(mos?|mons?|months?)$/, 30 * 86400],
  [/^(y|yrs?|years?)$/, 365.25 * 86400],
];

/** Seconds, or undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const normalized = text.toLowerCase().replace(/\band\b/g, ' ').replace(/,/g, ' ').trim();
  if (normalized === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(normalized)) return Math.trunc(Number(normalized));
  const tokens = normalized.match(/\d+(?:\.\d+)?|[a-z]+/g);
  if (!tokens || tokens.join('').length !== normalized.replace(/\s+/g, '').length) return undefined;
  let seconds = 0;
  for (let i = 0; i < tokens.length; i += 2) {
    const amount = Number(tokens[i]);
    const unit = tokens[i + 1];
    if (!Number.isFinite(amount) || unit === undefined || /^\d/.test(unit)) return undefined;
    const factor = UNIT_SECONDS.find(([pattern]) => pattern.test(unit))?.[1];
    if (factor === undefined) return undefined;
    seconds += amount * factor;
  }
  return Math.trunc(seconds);
}
