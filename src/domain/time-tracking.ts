import { unhandled } from './decider.js';
import { invalid } from './errors.js';

/**
 * GitLab 12's time-tracking durations (`Gitlab::TimeTrackingFormatter`): ChronicDuration
 * with `hours_per_day = 8`, `days_per_week = 5`, `raise_exceptions = true`
 * (config/initializers/chronic_duration.rb) and GitLab's patch making a month four weeks
 * (lib/gitlab/patch/chronic_duration.rb, gitlab-ce#66637).
 *
 * Units when reading: s, m, h, d = 8 h, w = 5 d, mo = 4 w (20 d), y = 31 557 600 s (a
 * Julian year, unpatched); a bare number is hours (`default_unit: 'hours'`). Not the
 * registry's reader (`./duration.ts`: 24-hour days, seconds by default).
 *
 * Not a library: no npm package reproduces ChronicDuration's word list, its `1:30` clock
 * form and GitLab's 8-hour/5-day/4-week conversions; the rules below follow the gem's
 * `cleanup` / `calculate_from_words` / `output` step by step. Left out: ChronicDuration's
 * Numerizer (`one hour`, `half an hour`), which GitLab would read and this refuses.
 */

const MINUTE = 60;
const HOUR = 3600;
const HOURS_PER_DAY = 8;
const DAYS_PER_WEEK = 5;
const DAY = HOURS_PER_DAY * HOUR; // 28 800
const WEEK = DAYS_PER_WEEK * DAY; // 144 000
const MONTH_READ = DAYS_PER_WEEK * 4 * DAY; // 576 000: GitLab's patch (days_per_month = days_per_week * 4)
const YEAR = 31_557_600; // ChronicDuration's fixed year, whatever the day length
const MONTH_OUTPUT = 30 * DAY; // `output` still counts 30 days in its year branch

const UNIT_SECONDS: Readonly<Record<string, number>> = {
  seconds: 1,
  minutes: MINUTE,
  hours: HOUR,
  days: DAY,
  weeks: WEEK,
  months: MONTH_READ,
  years: YEAR,
};

/** ChronicDuration#mappings: the words it knows, each to its unit. */
const MAPPINGS: Readonly<Record<string, string>> = {
  seconds: 'seconds', second: 'seconds', secs: 'seconds', sec: 'seconds', s: 'seconds',
  minutes: 'minutes', minute: 'minutes', mins: 'minutes', min: 'minutes', m: 'minutes',
  hours: 'hours', hour: 'hours', hrs: 'hours', hr: 'hours', h: 'hours',
  days: 'days', day: 'days', dy: 'days', d: 'days',
  weeks: 'weeks', week: 'weeks', wks: 'weeks', wk: 'weeks', w: 'weeks',
  months: 'months', mo: 'months', mos: 'months', month: 'months',
  years: 'years', year: 'years', yrs: 'years', yr: 'years', y: 'years',
};
const JOIN_WORDS = new Set(['and', 'with', 'plus']);
/** The clock form `h:m:s` counts from seconds up, weeks skipped. */
const CHRONO_UNITS = ['seconds', 'minutes', 'hours', 'days', 'months', 'years'];

const FLOAT = '[0-9]*\\.?[0-9]+';
const hasNumber = (word: string) => new RegExp(FLOAT).test(word);
const isUnit = (word: string) => Object.hasOwn(MAPPINGS, word);

/** ChronicDuration#filter_by_type: `1:30` → `1 minutes 30 seconds`; undefined for too many fields. */
function clockForm(text: string): string | undefined {
  const compact = text.replaceAll(' ', '');
  if (!new RegExp(`${FLOAT}(:${FLOAT})+`).test(compact)) return text;
  // Ruby's String#split drops trailing empty fields (`1:30:` is `1`, `30`).
  const fields = compact.split(':');
  while (fields.length > 0 && fields.at(-1) === '') fields.pop();
  const parts = fields.reverse();
  if (parts.length > CHRONO_UNITS.length) return undefined;
  return parts.map((part, i) => `${part} ${CHRONO_UNITS[i]}`).reverse().join(' ');
}

/** ChronicDuration#cleanup with raise_exceptions: the words, or undefined on an unknown one. */
function cleanup(text: string): string[] | undefined {
  const clock = clockForm(text.toLowerCase());
  if (clock === undefined) return undefined;
  const spaced = clock.replace(new RegExp(FLOAT, 'g'), (n) => ` ${n} `).replace(/ +/g, ' ').trim();
  const words: string[] = [];
  // Ruby's split(' '): runs of ASCII whitespace.
  for (const word of spaced.split(/[ \t\n\v\f\r]+/).filter((w) => w !== '')) {
    if (hasNumber(word)) {
      words.push(word);
      continue;
    }
    const stripped = word.replace(/^,/, '').replace(/,$/, '');
    if (isUnit(stripped)) words.push(MAPPINGS[stripped]!);
    else if (!JOIN_WORDS.has(stripped)) return undefined;
  }
  // "h 30m" reads as "1 h 30m".
  if (words.length > 0 && isUnit(words[0]!)) words.unshift('1');
  return words;
}

/**
 * Seconds in a time-tracking duration, or undefined where GitLab's parser answers nil
 * (unreadable text, or zero). A leading `-` makes the whole duration negative (`-3h 20m` is
 * −12 000), as `add_spent_time` takes it. Fractions are truncated to whole seconds as
 * GitLab's integer columns store them (`1.5h` is 5400). Not bounded: GitLab 12 clamps an
 * estimate to 2147483647 (TimeTrackable#time_estimate=); a caller storing spent time checks
 * the range itself.
 */
export function parseTimeTracking(text: string): number | undefined {
  const negative = text.startsWith('-');
  const words = cleanup(negative ? text.slice(1) : text);
  if (words === undefined) return undefined;
  let seconds = 0;
  words.forEach((word, k) => {
    if (!hasNumber(word)) return;
    const unit = words[k + 1] ?? 'hours';
    seconds += Number(word) * (UNIT_SECONDS[unit] ?? 0);
  });
  if (seconds === 0 || !Number.isFinite(seconds)) return undefined;
  const whole = Math.trunc(seconds);
  return negative ? -whole : whole;
}

/**
 * GitLab's human duration (`ChronicDuration.output(s, format: :short, weeks: true)` with
 * 8-hour days and 5-day weeks): 5400 → `1h 30m`, 28800 → `1d`, 460800 → `3w 1d`, 576000 →
 * `1mo`; null for 0. A negative amount is printed in seconds (`-3600s`), as the gem does.
 * From a year of seconds on, the gem's year branch counts 30-day months and no weeks.
 */
export function formatTimeTracking(seconds: number): string | null {
  let s = Math.trunc(seconds);
  let years = 0;
  let months = 0;
  let weeks = 0;
  let days = 0;
  let hours = 0;
  let minutes = 0;
  if (s >= YEAR && s % YEAR < s % MONTH_OUTPUT) {
    years = Math.floor(s / YEAR);
    const rest = s % YEAR;
    months = Math.floor(rest / MONTH_OUTPUT);
    days = Math.floor((rest % MONTH_OUTPUT) / DAY);
    hours = Math.floor((rest % MONTH_OUTPUT % DAY) / HOUR);
    minutes = Math.floor((rest % MONTH_OUTPUT % DAY % HOUR) / MINUTE);
    s = rest % MONTH_OUTPUT % DAY % HOUR % MINUTE;
  } else if (s >= MINUTE) {
    minutes = Math.floor(s / MINUTE);
    s %= MINUTE;
    hours = Math.floor(minutes / 60);
    minutes %= 60;
    days = Math.floor(hours / HOURS_PER_DAY);
    hours %= HOURS_PER_DAY;
    weeks = Math.floor(days / DAYS_PER_WEEK);
    days %= DAYS_PER_WEEK;
    months = Math.floor(weeks / 4);
    weeks %= 4;
  }
  const parts: Array<[number, string]> = [[years, 'y'], [months, 'mo'], [weeks, 'w'], [days, 'd'], [hours, 'h'], [minutes, 'm'], [s, 's']];
  const text = parts.filter(([n]) => n !== 0).map(([n, unit]) => `${n}${unit}`).join(' ');
  return text === '' ? null : text;
}

// ───────────────────────────── Time tracking of an issuable ─────────────────────────────

/** The time columns' largest value (PostgreSQL integer). */
export const TIME_MAX = 2_147_483_647;

/** API::TimeTrackingEndpoints' commands, the same for issues and merge requests. */
export type TimeTrackingCommand =
  | { readonly type: 'SetTimeEstimate'; readonly seconds: number }
  | { readonly type: 'AddSpentTime'; readonly userId: number; readonly seconds: number }
  | { readonly type: 'ResetSpentTime'; readonly userId: number };

/** What a time-tracking command records: a new estimate, a timelog (GitLab's reset is one of minus the total), or nothing. */
export type TimeTrackingChange = { readonly estimate: number } | { readonly userId: number; readonly spent: number; readonly reset: boolean } | null;

/**
 * TimeTrackable (GitLab 12) for an issuable with these totals: an unchanged estimate and a
 * zero timelog record nothing; a total below zero is check_negative_time_spent's error, one
 * past the integer column is refused as its timelog would be (GitLab 12's sum failed there).
 */
export function decideTimeTracking(command: TimeTrackingCommand, totals: { readonly timeEstimate: number; readonly totalTimeSpent: number }): TimeTrackingChange {
  switch (command.type) {
    case 'SetTimeEstimate':
      return command.seconds === totals.timeEstimate ? null : { estimate: command.seconds };
    case 'AddSpentTime':
      if (totals.totalTimeSpent + command.seconds < 0) throw invalid({ base: ['Time to subtract exceeds the total time spent'] });
      if (totals.totalTimeSpent + command.seconds > TIME_MAX) throw invalid({ timelogs: ['is invalid'] });
      return command.seconds === 0 ? null : { userId: command.userId, spent: command.seconds, reset: false };
    case 'ResetSpentTime':
      return totals.totalTimeSpent === 0 ? null : { userId: command.userId, spent: -totals.totalTimeSpent, reset: true };
    default:
      return unhandled(command);
  }
}
