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

/** RE2's syntax error for a pattern, or undefined when it compiles (GitLab's UntrustedRegexp). */
export function regexpError(pattern: string): string | undefined {
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
