/**
 * What GitLab 12 reads in an issue's or merge request's title and description: task lists
 * (`Taskable`), `@` mentions (`User.reference_pattern` through Banzai's
 * `UserReferenceFilter`), the mentions that address someone directly (Banzai's
 * `DirectlyAddressedUserParser`, the `directly_addressed` todos) and the WIP title prefix
 * (`MergeRequest::WIP_REGEX`). Pure text functions: resolving a name to a user or a group is
 * the caller's.
 *
 * GitLab renders Markdown (CommonMark) before it looks for mentions; this module has no
 * Markdown parser, and recognises the constructs that decide the answer by their lines:
 * fenced and indented code blocks, code spans, links and autolinks, HTML `<a>`, `<code>`,
 * `<pre>` and comments (all skipped, as Banzai skips `a`, `code` and `pre`), and for
 * direct addressing the top-level paragraphs (not headings, lists, quotes or tables).
 * Reference-style links (`[text][ref]`) and raw HTML blocks beyond those tags are read as
 * text.
 */

// ───────────────────────────── Task lists ─────────────────────────────

/** Ruby's `\s` (ASCII only; JavaScript's also takes Unicode spaces). */
const S = '[ \\t\\r\\n\\f\\v]';

/**
 * Taskable::ITEM_PATTERN: at the start of a line (Ruby's `^`: after `\n` only), optional
 * blockquote marks, one or more list markers (`-`, `+`, `*`, `1.`), whitespace, a checkbox
 * `[ ]` / `[x]` / `[X]`, then whitespace and some text. Read on the raw description: a
 * task inside a code block counts, as in GitLab.
 */
const TASK_ITEM = new RegExp(`^(?:>${S}{0,4})*((?:${S}*(?:[-+*]|\\d+\\.))+)${S}+(\\[${S}\\]|\\[[xX]\\])(${S}[^\\n]+)`);

/**
 * How many lines, from its first, a task item may span. Ruby's `\s` lets the pattern run over
 * line breaks (`-\n\n- [ ] a` is one item); unbounded, each line of a run of marker-only lines
 * would read the rest of the run again, and a description of them would cost time quadratic
 * in its length. Tried on at most this many lines from each line start, it costs linear time,
 * and only an item whose markers and checkbox stand more than this many lines apart is
 * missed.
 */
const TASK_ITEM_LINES = 8;

/** `task_completion_status` of an issue or merge request (TaskList::Summary of Taskable's items). */
export function taskCompletionStatus(description: string | null | undefined): { count: number; completed_count: number } {
  // `description.blank?`: nil, empty or whitespace only.
  if (!description || description.trim() === '') return { count: 0, completed_count: 0 };
  const starts = [0];
  for (let at = description.indexOf('\n'); at !== -1; at = description.indexOf('\n', at + 1)) starts.push(at + 1);
  let count = 0;
  let completed = 0;
  // As the global pattern scans: an item at a line start, the next one at a line start after it.
  for (let line = 0; line < starts.length; ) {
    const start = starts[line]!;
    const match = TASK_ITEM.exec(description.slice(start, starts[line + TASK_ITEM_LINES] ?? description.length));
    if (!match) {
      line += 1;
      continue;
    }
    count += 1;
    if (/\[[xX]\]/.test(match[2]!)) completed += 1;
    const end = start + match[0].length;
    while (line < starts.length && starts[line]! < end) line += 1;
  }
  return { count, completed_count: completed };
}

// ───────────────────────────── Mentions ─────────────────────────────

/** Gitlab::PathRegex::NAMESPACE_FORMAT_REGEX (not ending in `.git` or `.atom`). */
const NAMESPACE = '(?:[a-zA-Z0-9_.][a-zA-Z0-9_\\-.]*[a-zA-Z0-9_\\-]|[a-zA-Z0-9_])(?<!\\.git|\\.atom)';
/** User.reference_pattern: `@` not after a word character, then a full namespace path (`@group/subgroup`). */
const REFERENCE = `(?<![A-Za-z0-9_])@((?:${NAMESPACE}/)*${NAMESPACE})`;
const REFERENCE_ANYWHERE = new RegExp(REFERENCE, 'g');
const REFERENCE_HERE = new RegExp(REFERENCE, 'y');

/** Stands where GitLab has an element that is not a mention (a code span, a link): not a word character, not blank. */
const OPAQUE = '\u0000';

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
const blank = (line: string) => /^[ \t]*$/.test(line);
const indentOf = (line: string) => (line.match(/^[ \t]*/)![0].replace(/\t/g, '    ').length);
const LIST_ITEM = /^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)/;

/**
 * The Markdown blocks as lines, code blocks replaced by blank lines (their text is in
 * `<pre><code>`, which Banzai skips, and they end a paragraph).
 */
function withoutCodeBlocks(text: string): string[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let fence: string | null = null;
  let inList = false;
  let previousBlank = true;
  for (const line of lines) {
    if (fence !== null) {
      if (new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`).test(line)) fence = null;
      out.push('');
      continue;
    }
    const open = line.match(FENCE_OPEN);
    if (open && !(open[1]![0] === '`' && line.slice(line.indexOf(open[1]!) + open[1]!.length).includes('`'))) {
      fence = open[1]!;
      out.push('');
      previousBlank = true;
      continue;
    }
    // An indented code block starts after a blank line, outside a list item's continuation.
    if (!blank(line) && indentOf(line) >= 4 && previousBlank && !inList) {
      out.push('');
      continue;
    }
    if (!blank(line)) {
      if (LIST_ITEM.test(line)) inList = true;
      else if (indentOf(line) === 0 && previousBlank) inList = false;
    }
    previousBlank = blank(line);
    out.push(line);
  }
  return out;
}

/** Code spans, links, autolinks, bare URLs and skipped HTML become OPAQUE: Banzai reads no mention in them. */
function withoutInlineSkips(text: string): string {
  return (
    text
      .replace(/<!--[\s\S]*?-->/g, ' ')
      .replace(/<(a|code|pre)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, OPAQUE)
      // Code spans: a run of backticks up to the same run.
      .replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, OPAQUE)
      // Inline links and images: [text](destination).
      .replace(/!?\[[^\]\n]*\]\([^)\n]*\)/g, OPAQUE)
      .replace(/<(?:https?|ftp|mailto):[^>\s]*>/gi, OPAQUE)
      // Bare URLs, which GitLab's AutolinkFilter makes links before the reference filters run.
      .replace(/\b(?:https?|ftp|smb|irc):\/\/[^\s<]+/gi, OPAQUE)
  );
}

/**
 * The names mentioned with `@` in a title or description (`@alice`, `@group/subgroup`,
 * `@all`), in order of first appearance, each once (compared without case, as GitLab finds
 * namespaces by their downcased full path); the form of the first appearance is kept. Not
 * in code (blocks and spans), links or URLs, as Banzai's UserReferenceFilter skips them.
 * Whether a name is a user, a group or nothing is the caller's lookup.
 */
export function mentionedUsernames(text: string | null | undefined): string[] {
  if (!text) return [];
  const readable = withoutInlineSkips(withoutCodeBlocks(text).join('\n'));
  const seen = new Map<string, string>();
  for (const match of readable.matchAll(REFERENCE_ANYWHERE)) {
    const name = match[1]!;
    if (!seen.has(name.toLowerCase())) seen.set(name.toLowerCase(), name);
  }
  return [...seen.values()];
}

/** A block that CommonMark makes something other than a paragraph, judged by its first two lines. */
function isParagraph(block: readonly string[]): boolean {
  const [first, second] = block as [string, string | undefined];
  if (indentOf(first) >= 4) return false;
  if (/^ {0,3}(?:#{1,6}(?:[ \t]|$)|>|<|\|)/.test(first)) return false;
  if (LIST_ITEM.test(first)) return false;
  if (/^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/.test(first)) return false;
  if (second !== undefined) {
    // A setext heading, or a table's delimiter row under its header.
    if (/^ {0,3}(?:=+|-+)[ \t]*$/.test(second) && block.length === 2) return false;
    if (first.includes('|') && /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/.test(second)) return false;
  }
  return true;
}

/**
 * The names that address someone directly (GitLab's `directly_addressed` todos): the `@`
 * mentions that open a top-level paragraph, one after another with only whitespace
 * between them (`@alice @bob please review` addresses both; `@alice, @bob` only alice;
 * `Hi @alice` nobody). Every top-level paragraph counts, not only the first, as Banzai's
 * `location: :beginning` filter reads each `./p`. A name GitLab would not make a link (no
 * such user or group) is text and ends the run: pass `isReference` to say which names
 * resolve; without it every name does. Each name once, compared without case.
 */
export function directlyAddressedUsernames(text: string | null | undefined, isReference: (name: string) => boolean = () => true): string[] {
  if (!text) return [];
  const lines = withoutCodeBlocks(text);
  const blocks: string[][] = [];
  let current: string[] = [];
  for (const line of lines) {
    if (blank(line)) {
      if (current.length > 0) blocks.push(current);
      current = [];
    } else current.push(line);
  }
  if (current.length > 0) blocks.push(current);

  const seen = new Map<string, string>();
  for (const block of blocks) {
    if (!isParagraph(block)) continue;
    const paragraph = withoutInlineSkips(block.join('\n'));
    let at = 0;
    for (;;) {
      while (at < paragraph.length && /[ \t\n]/.test(paragraph[at]!)) at += 1;
      REFERENCE_HERE.lastIndex = at;
      const match = REFERENCE_HERE.exec(paragraph);
      if (!match || !isReference(match[1]!)) break;
      const name = match[1]!;
      if (!seen.has(name.toLowerCase())) seen.set(name.toLowerCase(), name);
      at = REFERENCE_HERE.lastIndex;
    }
  }
  return [...seen.values()];
}

// ───────────────────────────── Work in progress ─────────────────────────────

/**
 * MergeRequest::WIP_REGEX of GitLab 12: `\A*(\[WIP\]\s*|WIP:\s*|WIP\s+)+\s*`, ignoring case.
 * Its `\A*` (the anchor repeated, possibly zero times) anchors nothing, so `[WIP]`, `WIP:` or `WIP `
 * anywhere in the title marks it (`Fix WIP handling` is a WIP title in GitLab 12), in any case.
 */
const WIP = /(?:\[WIP\][ \t\r\n\f\v]*|WIP:[ \t\r\n\f\v]*|WIP[ \t\r\n\f\v]+)+[ \t\r\n\f\v]*/i;

/** MergeRequest#work_in_progress? (the entity's `work_in_progress`, and what makes a merge request unmergeable). */
export function isWorkInProgress(title: string): boolean {
  return WIP.test(title);
}

/**
 * The list filter `wip=yes` (MergeRequest.wip_match): the title begins with `WIP:`, `WIP `
 * or `[WIP]`, compared as SQL `ILIKE` does (case-insensitive): in SQL,
 * `title ILIKE 'WIP:%' OR title ILIKE 'WIP %' OR title ILIKE '[WIP]%'` (`wip=no` its
 * negation). Narrower than `isWorkInProgress`, as in GitLab 12.
 */
export function matchesWipFilter(title: string): boolean {
  const head = title.slice(0, 5).toLowerCase();
  return head.startsWith('wip:') || head.startsWith('wip ') || head.startsWith('[wip]');
}

/** MergeRequest.wipless_title: the first WIP marker run removed. */
export function wiplessTitle(title: string): string {
  return title.replace(WIP, '');
}

/** MergeRequest.wip_title: `WIP: ` prepended unless the title already is a WIP title. */
export function wipTitle(title: string): string {
  return isWorkInProgress(title) ? title : `WIP: ${title}`;
}
