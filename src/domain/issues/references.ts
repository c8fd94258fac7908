/**
 * Issue references in a text (GitLab's Issue.reference_pattern and link_reference_pattern)
 * and the ones GitLab's ClosingIssueExtractor reads as closing, with GitLab 12's default
 * `issue_closing_pattern` (`Closes #1`, `Fixes group/project#2`, `Resolves: #3 and #4`,
 * `Implements https://host/group/project/-/issues/5`).
 *
 * These texts are written by anyone who can push or open a merge request, so they are read
 * by scanners whose cost is linear in the text. Each finds what these regular expressions
 * find (PATH = `[a-zA-Z0-9_.][a-zA-Z0-9_.\-]*(?:/[a-zA-Z0-9_.][a-zA-Z0-9_.\-]*)*`), whose
 * backtracking is quadratic on a long path without a `#` or a long run of spaces:
 *   short   `(?<![\w/#&])(?:(PATH))?#(\d+)(?!\w)`
 *   link    `https?://[^\s/]+/(PATH)/(?:-/)?issues/(\d+)(?![\w/])`
 *   closing `\b(KEYWORD(:?) +(?:(?:issues? +)?ISSUE_REF(?:(?: *,? +and +| *,? *)?)|([A-Z][A-Z0-9_]+-\d+))+)`
 *           with ISSUE_REF the link or the short form, neither bounded.
 */

/** `path` null: the text's own project; a path without a slash: a project of the same namespace. */
export interface IssueReference {
  readonly path: string | null;
  readonly iid: number;
}

interface Found extends IssueReference {
  readonly end: number;
}

const SLASH = 0x2f;
const HASH = 0x23;
const SPACE = 0x20;

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isUpper = (c: number): boolean => c >= 0x41 && c <= 0x5a;
const isWord = (c: number): boolean => isDigit(c) || isUpper(c) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
const isSegmentStart = (c: number): boolean => isWord(c) || c === 0x2e;
const isSegmentChar = (c: number): boolean => isSegmentStart(c) || c === 0x2d;
const HOST_STOP = /[\s/]/;

function runEnd(text: string, at: number, within: (c: number) => boolean): number {
  let i = at;
  while (within(text.charCodeAt(i))) i += 1;
  return i;
}

/** The end of the longest PATH from `at` (`at` itself when none starts there). */
function pathEnd(text: string, at: number): number {
  if (!isSegmentStart(text.charCodeAt(at))) return at;
  let i = at;
  for (;;) {
    i = runEnd(text, i + 1, isSegmentChar);
    if (text.charCodeAt(i) !== SLASH || !isSegmentStart(text.charCodeAt(i + 1))) return i;
  }
}

/** `(?:PATH)?#\d+` at `at`, `path` the end of the longest PATH from there. */
function shortReference(text: string, at: number, path = pathEnd(text, at)): Found | null {
  if (text.charCodeAt(path) !== HASH) return null;
  const end = runEnd(text, path + 1, isDigit);
  if (end === path + 1) return null;
  return { path: path > at ? text.slice(at, path) : null, iid: Number(text.slice(path + 1, end)), end };
}

/**
 * `https?://[^\s/]+/(PATH)/(?:-/)?issues/(\d+)` at `at` with the longest PATH that fits, as
 * backtracking finds it; `bounded`: the number not followed by a word character or a slash.
 */
function linkReference(text: string, at: number, bounded: boolean): Found | null {
  const scheme = text.startsWith('https://', at) ? 8 : text.startsWith('http://', at) ? 7 : 0;
  if (scheme === 0) return null;
  let host = at + scheme;
  while (host < text.length && !HOST_STOP.test(text[host]!)) host += 1;
  if (host === at + scheme || text.charCodeAt(host) !== SLASH) return null;
  const start = host + 1;
  // The path ends before one of its own slashes or the one after it, the longest first.
  for (let slash = pathEnd(text, start); slash > start; slash -= 1) {
    if (text.charCodeAt(slash) !== SLASH) continue;
    const issues = text.startsWith('-/', slash + 1) ? slash + 3 : slash + 1;
    if (!text.startsWith('issues/', issues)) continue;
    const digits = issues + 'issues/'.length;
    const end = runEnd(text, digits, isDigit);
    if (end === digits) continue;
    if (bounded && (isWord(text.charCodeAt(end)) || text.charCodeAt(end) === SLASH)) continue;
    return { path: text.slice(start, slash), iid: Number(text.slice(digits, end)), end };
  }
  return null;
}

/** Every issue reference of a text, once each, in order. */
export function issueReferences(text: string | null | undefined): IssueReference[] {
  if (!text) return [];
  const found: { at: number; ref: IssueReference }[] = [];
  for (let at = text.indexOf('http'); at !== -1; ) {
    const link = linkReference(text, at, true);
    if (link) found.push({ at, ref: { path: link.path, iid: link.iid } });
    at = text.indexOf('http', link ? link.end : at + 1);
  }
  for (let at = 0; at < text.length; ) {
    const before = at > 0 ? text.charCodeAt(at - 1) : NaN;
    if (isWord(before) || before === SLASH || before === HASH || before === 0x26 /* & */) {
      at += 1;
      continue;
    }
    const path = pathEnd(text, at);
    const short = shortReference(text, at, path);
    if (short && !isWord(text.charCodeAt(short.end))) {
      found.push({ at, ref: { path: short.path, iid: short.iid } });
      at = short.end;
    } else {
      // Every start inside this path ends its path where this one does, and fails alike.
      at = Math.max(path, at + 1);
    }
  }
  const seen = new Set<string>();
  return found
    .sort((a, b) => a.at - b.at)
    .map((f) => f.ref)
    .filter((ref) => Number.isSafeInteger(ref.iid) && !seen.has(`${ref.path}#${ref.iid}`) && seen.add(`${ref.path}#${ref.iid}`));
}

/** gitlab.yml's default issue_closing_pattern up to its list of references. */
const CLOSING_KEYWORD = /\b(?:[Cc]los(?:e[sd]?|ing)|[Ff]ix(?:e[sd]|ing)?|[Rr]esolv(?:e[sd]?|ing)|[Ii]mplement(?:s|ed|ing)?):? +/g;

function spacesEnd(text: string, at: number): number {
  return runEnd(text, at, (c) => c === SPACE);
}

/** ` *,? +and +` if it matches at `at`, else ` *,? *` (which always does). */
function separatorEnd(text: string, at: number): number {
  const spaces = spacesEnd(text, at);
  const afterComma = text.charCodeAt(spaces) === 0x2c ? spacesEnd(text, spaces + 1) : spaces;
  const and = afterComma > spaces + 1 ? afterComma : spaces > at ? spaces : -1;
  if (and !== -1 && text.startsWith('and ', and)) return spacesEnd(text, and + 3);
  return afterComma;
}

/** One item of the closing list at `at`: `(?:issues? +)?ISSUE_REF` and its separator, or a `JIRA-1` key. */
function closingItemEnd(text: string, at: number): number | null {
  const reference = (from: number) => linkReference(text, from, false) ?? shortReference(text, from);
  if (text.startsWith('issue', at)) {
    const word = text.charCodeAt(at + 5) === 0x73 /* s */ ? at + 6 : at + 5;
    const prefixed = text.charCodeAt(word) === SPACE ? reference(spacesEnd(text, word)) : null;
    if (prefixed) return separatorEnd(text, prefixed.end);
  }
  const plain = reference(at);
  if (plain) return separatorEnd(text, plain.end);
  if (!isUpper(text.charCodeAt(at))) return null;
  const key = runEnd(text, at + 1, (c) => isUpper(c) || isDigit(c) || c === 0x5f);
  if (key === at + 1 || text.charCodeAt(key) !== 0x2d) return null;
  const end = runEnd(text, key + 1, isDigit);
  return end === key + 1 ? null : end;
}

/** The references a text closes: those inside a closing phrase. */
export function closingIssueReferences(text: string | null | undefined): IssueReference[] {
  if (!text) return [];
  const phrases: string[] = [];
  const keyword = new RegExp(CLOSING_KEYWORD);
  for (let m = keyword.exec(text); m; m = keyword.exec(text)) {
    const items = m.index + m[0].length;
    let end = items;
    for (let next = closingItemEnd(text, end); next !== null; next = closingItemEnd(text, end)) end = next;
    if (end === items) {
      keyword.lastIndex = m.index + 1;
      continue;
    }
    phrases.push(text.slice(m.index, end));
    keyword.lastIndex = end;
  }
  return issueReferences(phrases.join('\n'));
}

/**
 * The project path a reference names, lowercased, seen from a project (its path with
 * namespace): null for the project itself, a path without a slash within the same namespace.
 */
export function referencedPath(ref: IssueReference, fromPath: string): string | null {
  if (ref.path === null) return null;
  return (ref.path.includes('/') ? ref.path : `${fromPath.slice(0, fromPath.lastIndexOf('/'))}/${ref.path}`).toLowerCase();
}

/** Whether references written in one project name one issue (its project's id and path, its iid). */
export function referencesIssue(refs: readonly IssueReference[], from: { id: number; path: string }, issue: { projectId: number; path: string; iid: number }): boolean {
  return refs.some((ref) => {
    if (ref.iid !== issue.iid) return false;
    const path = referencedPath(ref, from.path);
    return path === null ? from.id === issue.projectId : path === issue.path.toLowerCase();
  });
}

/**
 * MergeRequest#closes_issues (GitLab 12): the issues its title and description close, for a
 * merge request into its project's default branch only (none for another target).
 */
export function mergeRequestClosingReferences(mr: { title: string; description: string | null; target_branch: string }, defaultBranch: string | null): IssueReference[] {
  if (mr.target_branch !== defaultBranch) return [];
  return closingIssueReferences([mr.title, mr.description ?? ''].join('\n'));
}
