/**
 * Gitlab::Gfm::ReferenceRewriter (GitLab 12.10), as Issues::MoveService runs it over the moved
 * issue's description and notes (Issuable::Clone::ContentRewriter#rewrite_content): each
 * reference written in the old project that names something is written again as the new
 * project reads it — `#1` in `group/old` becomes `old#1` from a project of `group`, and
 * `group/old#1` from one elsewhere (Referable#to_reference(target_project)).
 *
 * forgelog reads the short forms of the references that name a project's objects by number:
 * issues `#1`, merge requests `!1`, milestones `%1` (by iid) and labels `~1` (by id; what the
 * system notes write), each with an optional project path (`other#1`, `group/other!2`). Named
 * labels and milestones (`~bug`, `%"v1.0"`), snippets, commits and users are left as they are
 * (a user's `@name` reads the same from any project). GitLab keeps a rewrite only when the
 * rendered text is the same (substitution_valid?): a reference in a code block, a code span,
 * a link or a URL is not one, and is left alone here too.
 *
 * Pure: the scan and the text; whether a reference names something, and its project's path,
 * is the caller's lookup.
 */

export type ReferenceKind = '#' | '!' | '%' | '~';

/** A reference as written: `path` null for the text's own project, a path without a slash for a project of the same namespace. */
export interface WrittenReference {
  readonly kind: ReferenceKind;
  readonly path: string | null;
  readonly number: number;
  readonly start: number;
  readonly end: number;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isWord = (c: number): boolean => isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
const isSegmentStart = (c: number): boolean => isWord(c) || c === 0x2e;
const isSegmentChar = (c: number): boolean => isSegmentStart(c) || c === 0x2d;
const KINDS = new Set<number>([0x23, 0x21, 0x25, 0x7e]);

/** Stands for a place no reference is read in (code, links, URLs): not a word character. */
const OPAQUE = '\u0000';
const opaque = (s: string) => s.replace(/[^\n]/g, OPAQUE);

/** The end of the longest PATH from `at` (`at` itself when none starts there): segments of `[\w.][\w.-]*` joined by slashes. */
function pathEnd(text: string, at: number): number {
  if (!isSegmentStart(text.charCodeAt(at))) return at;
  let i = at;
  for (;;) {
    i += 1;
    while (isSegmentChar(text.charCodeAt(i))) i += 1;
    if (text.charCodeAt(i) !== 0x2f || !isSegmentStart(text.charCodeAt(i + 1))) return i;
  }
}

/** The text with code blocks, code spans, links and URLs made OPAQUE, each character for one (offsets kept). */
function masked(text: string): string {
  const lines = text.split('\n');
  let fence: string | null = null;
  let previousBlank = true;
  const out = lines.map((line) => {
    if (fence !== null) {
      if (new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`).test(line)) fence = null;
      return opaque(line);
    }
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (open && !(open[1]![0] === '`' && line.slice(line.indexOf(open[1]!) + open[1]!.length).includes('`'))) {
      fence = open[1]!;
      previousBlank = true;
      return opaque(line);
    }
    const blank = /^[ \t\r]*$/.test(line);
    // An indented code block starts after a blank line.
    if (!blank && previousBlank && /^(?: {4}|\t)/.test(line)) return opaque(line);
    previousBlank = blank;
    return line;
  });
  // Every pattern below stops at the next place another match could start, so a text of
  // unclosed openings (`[x](`, `<pre `, backticks) costs its length, not its square.
  return maskCodeSpans(maskElements(out.join('\n')))
    .replace(/!?\[[^[\]\n]*\]\((?:[^()\n]|\([^()\n]*\))*\)/g, opaque)
    .replace(/<(?:https?|ftp|mailto):[^<>\s]*>/gi, opaque)
    .replace(/\b(?:https?|ftp|smb|irc):\/\/[^\s<]+/gi, opaque);
}

/** `text` with each [from, to) span made OPAQUE. */
function maskSpans(text: string, spans: readonly (readonly [number, number])[]): string {
  if (spans.length === 0) return text;
  let out = '';
  let at = 0;
  for (const [from, to] of spans) {
    out += text.slice(at, from) + opaque(text.slice(from, to));
    at = to;
  }
  return out + text.slice(at);
}

/**
 * `<a …>…</a>`, `<code …>…</code>` and `<pre …>…</pre>` (any case) made OPAQUE. Once an element
 * has no closing tag after an opening, no later opening of it has one: it is not looked for again.
 */
function maskElements(text: string): string {
  const lower = text.toLowerCase();
  const unclosed = new Set<string>();
  const spans: [number, number][] = [];
  const opening = /<(a|code|pre)(?![0-9a-z_])[^<>]*>/g;
  for (let found = opening.exec(lower); found; found = opening.exec(lower)) {
    const name = found[1]!;
    if (unclosed.has(name)) continue;
    let end = -1;
    for (let at = lower.indexOf(`</${name}`, opening.lastIndex); at >= 0; at = lower.indexOf(`</${name}`, at + 1)) {
      let i = at + 2 + name.length;
      while (/\s/.test(lower[i] ?? '')) i += 1;
      if (lower[i] === '>') {
        end = i + 1;
        break;
      }
    }
    if (end < 0) {
      unclosed.add(name);
      continue;
    }
    spans.push([found.index, end]);
    opening.lastIndex = end;
  }
  return maskSpans(text, spans);
}

/**
 * Code spans made OPAQUE (CommonMark: a run of backticks up to the next run of the same
 * length). Each length's runs are visited once, in order.
 */
function maskCodeSpans(text: string): string {
  const runs: { at: number; length: number }[] = [];
  for (let i = text.indexOf('`'); i >= 0; i = text.indexOf('`', i)) {
    let j = i;
    while (text.charCodeAt(j) === 0x60) j += 1;
    runs.push({ at: i, length: j - i });
    i = j;
  }
  const ofLength = new Map<number, number[]>();
  runs.forEach((run, k) => {
    const same = ofLength.get(run.length);
    if (same) same.push(k);
    else ofLength.set(run.length, [k]);
  });
  const next = new Map<number, number>();
  const spans: [number, number][] = [];
  for (let k = 0; k < runs.length; ) {
    const { at, length } = runs[k]!;
    const same = ofLength.get(length)!;
    let c = next.get(length) ?? 0;
    while (c < same.length && same[c]! <= k) c += 1;
    next.set(length, c);
    if (c === same.length) {
      k += 1;
      continue;
    }
    const close = runs[same[c]!]!;
    spans.push([at, close.at + close.length]);
    k = same[c]! + 1;
  }
  return maskSpans(text, spans);
}

/** Every reference of those kinds in a text, in order; linear in the text's length. */
export function writtenReferences(text: string): WrittenReference[] {
  const scan = masked(text);
  const found: WrittenReference[] = [];
  for (let at = 0; at < scan.length; ) {
    const before = at > 0 ? scan.charCodeAt(at - 1) : NaN;
    // Not inside a word, a path or another reference.
    if (isWord(before) || before === 0x2f || KINDS.has(before) || before === 0x26 || before === 0x40) {
      at += 1;
      continue;
    }
    const path = pathEnd(scan, at);
    const kind = scan.charCodeAt(path);
    if (KINDS.has(kind) && isDigit(scan.charCodeAt(path + 1))) {
      let end = path + 1;
      while (isDigit(scan.charCodeAt(end))) end += 1;
      const number = Number(scan.slice(path + 1, end));
      if (!isWord(scan.charCodeAt(end)) && Number.isSafeInteger(number)) {
        found.push({ kind: scan[path] as ReferenceKind, path: path > at ? scan.slice(at, path) : null, number, start: at, end });
        at = end;
        continue;
      }
    }
    // Every start inside this path ends its path where this one does, and fails alike.
    at = Math.max(path, at + 1);
  }
  return found;
}

/**
 * Project#to_reference_base(from): nothing for the project itself, its path within the same
 * namespace, else its full path.
 */
export function referenceBase(projectPath: string, fromPath: string): string {
  if (projectPath.toLowerCase() === fromPath.toLowerCase()) return '';
  const namespace = (p: string) => p.slice(0, p.lastIndexOf('/')).toLowerCase();
  return namespace(projectPath) === namespace(fromPath) ? projectPath.slice(projectPath.lastIndexOf('/') + 1) : projectPath;
}

/** The full path a reference's project path names, seen from a project (lowercased). */
export function referencedProjectPath(path: string | null, fromPath: string): string {
  if (path === null) return fromPath.toLowerCase();
  return (path.includes('/') ? path : `${fromPath.slice(0, fromPath.lastIndexOf('/'))}/${path}`).toLowerCase();
}

/**
 * The text with each reference `resolve` answers for written as `target` reads it: `resolve`
 * gives the full path of the project holding the object (null when it names nothing the
 * mover may read: the reference stays).
 */
export function rewriteReferences(text: string, targetPath: string, resolve: (ref: WrittenReference) => string | null): string {
  let out = '';
  let last = 0;
  for (const ref of writtenReferences(text)) {
    const holder = resolve(ref);
    if (holder === null) continue;
    out += text.slice(last, ref.start) + referenceBase(holder, targetPath) + ref.kind + String(ref.number);
    last = ref.end;
  }
  return out + text.slice(last);
}
