import { RE2JS } from 're2js';
import { parseDuration } from '../duration.js';

/**
 * The bulk tag deletion rules (DELETE …/registry/repositories/:id/tags), as GitLab 12.10's
 * Projects::ContainerRepository::CleanupTagsService applies them: never `latest`; only full
 * matches of name_regex_delete (or name_regex) that name_regex_keep does not match; the keep_n
 * newest of those kept; of the rest, only those created before now − older_than. Pure: the
 * clock arrives as `now`.
 */

export interface CleanupRules {
  /** name_regex_delete, or the deprecated name_regex (GitLab reads name_regex_delete first). */
  readonly nameRegexDelete: string;
  readonly nameRegexKeep: string | null;
  readonly keepN: number | null;
  /** Human form as ChronicDuration reads it ("1h", "2d", "1month"). */
  readonly olderThan: string | null;
}

export interface CleanupTag {
  readonly name: string;
  /** ISO 8601; null when the registry gave none. */
  readonly createdAt: string | null;
}

// ───────────────────────────── Untrusted patterns ─────────────────────────────

/**
 * The longest pattern forgelog compiles, in UTF-16 code units. RE2 (GitLab's UntrustedRegexp,
 * its default max_mem of 8 MiB) refuses a program too big for its memory with "pattern too
 * large - compile failed"; re2js, its JavaScript port, spends seconds and gigabytes on the
 * way to its own, later limit, so forgelog decides before compiling.
 */
export const REGEXP_MAX_LENGTH = 10_000;
/** The largest program forgelog compiles, in re2js instructions as `programSizeBound` counts them (an upper bound). */
export const REGEXP_MAX_PROGRAM = 10_000;
/** RE2's message for a program past max_mem (RE2::ErrorPatternTooLarge). */
export const PATTERN_TOO_LARGE = 'pattern too large - compile failed';

/** re2js refuses a counted repetition past 1000; a larger count costs no more than that here. */
const REPEAT_MAX = 1001;
const COUNTED = /\{(\d+)(,(\d*))?\}/y;

function countedAt(pattern: string, at: number): RegExpExecArray | null {
  COUNTED.lastIndex = at;
  return COUNTED.exec(pattern);
}

/**
 * An upper bound of the instructions re2js compiles `pattern` to, in one pass over its text
 * and without parsing it: every literal, escape or class at most one instruction, every
 * operator, alternative and group two or three, and a counted repetition `{n,m}` m copies of
 * what it repeats (and as many alternatives). What is not valid RE2 may be counted too high;
 * re2js refuses it after.
 */
export function programSizeBound(pattern: string): number {
  // The cost so far of each open group, and of the last atom (what a repetition repeats).
  const groups: { total: number; last: number }[] = [];
  let total = 4;
  let last = 0;
  let counted: RegExpExecArray | null;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '(') {
      groups.push({ total, last });
      // Two captures, and a no-op when it holds nothing.
      total = 3;
      last = 0;
    } else if (char === ')' && groups.length > 0) {
      const group = total;
      ({ total, last } = groups.pop()!);
      total += group;
      last = group;
    } else if (char === '|') {
      // A split, and a no-op when an alternative is empty.
      total += 2;
      last = 0;
    } else if (char === '*' || char === '+' || char === '?') {
      // A split, and a second one when what it repeats may match nothing (`(a*)*`).
      total += 2;
    } else if (char === '{' && (counted = countedAt(pattern, i))) {
      const [text, min, comma, max] = counted;
      const count = Math.min(comma === undefined ? Number(min) : max === '' || max === undefined ? Number(min) + 1 : Math.max(Number(min), Number(max)), REPEAT_MAX);
      const repeated = last * count + count;
      total += repeated - last;
      last = repeated;
      i += text.length - 1;
    } else if (char === '[') {
      // To the first `]` after the opening (and a leading `^` or `]`): where RE2 ends the class, or sooner.
      let j = i + 1;
      if (pattern[j] === '^') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j += pattern[j] === '\\' ? 2 : 1;
      total += 1;
      last = 1;
      i = j;
    } else {
      if (char === '\\') i++;
      total += 1;
      last = 1;
    }
  }
  while (groups.length > 0) total += groups.pop()!.total;
  return total;
}

/**
 * RE2's error for a pattern, or undefined when it compiles (GitLab's UntrustedRegexp). A pattern
 * longer than REGEXP_MAX_LENGTH, or whose program may pass REGEXP_MAX_PROGRAM, is RE2's
 * "pattern too large" without being compiled.
 */
export function regexpError(pattern: string): string | undefined {
  if (pattern.length > REGEXP_MAX_LENGTH || programSizeBound(pattern) > REGEXP_MAX_PROGRAM) return PATTERN_TOO_LARGE;
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : String(error);
  }
}

/** `\A(?:pattern)\z`: GitLab wraps the pattern as `\A#{pattern}\z`; the group keeps an alternation whole. */
function fullMatcher(pattern: string): (name: string) => boolean {
  const regexp = RE2JS.compile(`^(?:${pattern})$`);
  return (name) => regexp.matches(name);
}

/**
 * The names of the tags to delete, oldest first. Input GitLab's worker would fail on (an
 * invalid regexp, an older_than ChronicDuration cannot read, a negative keep_n) deletes
 * nothing, as the worker's failure does.
 */
export function tagsToDelete(tags: readonly CleanupTag[], rules: CleanupRules, now: Date): string[] {
  if ([rules.nameRegexDelete, rules.nameRegexKeep].some((p) => p !== null && regexpError(p) !== undefined)) return [];
  if (rules.keepN !== null && rules.keepN < 0) return [];
  const olderThanSeconds = rules.olderThan === null ? null : parseDuration(rules.olderThan);
  if (olderThanSeconds === undefined) return [];

  const deletes = fullMatcher(rules.nameRegexDelete);
  // GitLab: `\A#{name_regex_keep}\z` with a nil keep is `\A\z`, which no tag name matches.
  const keeps = rules.nameRegexKeep === null ? () => false : fullMatcher(rules.nameRegexKeep);
  let candidates = tags.filter((tag) => tag.name !== 'latest' && deletes(tag.name) && !keeps(tag.name));

  if (rules.keepN !== null) {
    // order_by_date: newest first, a tag without a creation time counted as created now.
    const at = (tag: CleanupTag) => (tag.createdAt === null ? now.getTime() : Date.parse(tag.createdAt));
    candidates = [...candidates].sort((a, b) => at(b) - at(a) || compareNames(b.name, a.name)).slice(rules.keepN);
  }
  if (olderThanSeconds !== null) {
    const before = now.getTime() - olderThanSeconds * 1000;
    candidates = candidates.filter((tag) => tag.createdAt !== null && Date.parse(tag.createdAt) < before);
  }
  return candidates
    .sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || compareNames(a.name, b.name))
    .map((tag) => tag.name);
}

/** Ties broken by name, so the same tags give the same answer whatever order they came in. */
const compareNames = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
