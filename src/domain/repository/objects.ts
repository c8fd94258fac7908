import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

/**
 * Git's object format, byte for byte: what `git hash-object`, `git mktree` and
 * `git commit-tree` write. An object's id is the SHA-1 of `<type> <size>\0<content>`;
 * the content is stored as is (zlib is only for the wire).
 */

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface GitObject {
  readonly sha: string;
  readonly type: ObjectType;
  readonly content: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function gitObject(type: ObjectType, content: Uint8Array): GitObject {
  const hash = createHash('sha1');
  hash.update(`${type} ${content.length}\0`);
  hash.update(content);
  return { sha: hash.digest('hex'), type, content };
}

/** A loose object, as `.git/objects/xx/yyyy…` holds it: the zlib stream of `<type> <size>\0<content>`. */
export const looseObject = (type: ObjectType, content: Uint8Array): Buffer<ArrayBuffer> => deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]));

export const blob = (content: Uint8Array | string): GitObject => gitObject('blob', typeof content === 'string' ? encoder.encode(content) : content);

// ───────────────────────────── Trees ─────────────────────────────

/** The modes git writes in trees (as octal text, a tree's without the leading zero). */
export const MODES = { file: '100644', executable: '100755', tree: '40000', symlink: '120000' } as const;
export type Mode = (typeof MODES)[keyof typeof MODES];

export interface TreeEntry {
  readonly mode: Mode;
  readonly name: string;
  readonly sha: string;
}

/** Git's order: by name's bytes, a tree's name compared as if it ended with '/'. */
function sortKey(entry: TreeEntry): Uint8Array {
  return encoder.encode(entry.mode === MODES.tree ? `${entry.name}/` : entry.name);
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

export function tree(entries: readonly TreeEntry[]): GitObject {
  const sorted = [...entries].sort((a, b) => compareBytes(sortKey(a), sortKey(b)));
  const parts: Uint8Array[] = [];
  for (const entry of sorted) {
    parts.push(encoder.encode(`${entry.mode} ${entry.name}\0`), Buffer.from(entry.sha, 'hex'));
  }
  return gitObject('tree', Buffer.concat(parts));
}

export function parseTree(content: Uint8Array): TreeEntry[] {
  // A view, not a copy: modes, names and SHAs are read where they lie.
  const bytes = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const entries: TreeEntry[] = [];
  let i = 0;
  while (i < bytes.length) {
    const space = bytes.indexOf(0x20, i);
    const nul = bytes.indexOf(0, space);
    const mode = text(bytes, i, space) as Mode;
    const name = text(bytes, space + 1, nul);
    const sha = bytes.toString('hex', nul + 1, nul + 21);
    entries.push({ mode, name, sha });
    i = nul + 21;
  }
  return entries;
}

/** Bytes `start` to `end` as UTF-8, as `decoder` decodes them; ASCII, which nearly every mode and name is, without it. */
function text(bytes: Buffer, start: number, end: number): string {
  for (let k = start; k < end; k++) if (bytes[k]! >= 0x80) return decoder.decode(bytes.subarray(start, end));
  return bytes.toString('latin1', start, end);
}

// ───────────────────────────── Commits ─────────────────────────────

export interface Signature {
  readonly name: string;
  readonly email: string;
  /** Seconds since the epoch. */
  readonly time: number;
  /** Minutes east of UTC (git's `+0100` is 60). */
  readonly tzOffset: number;
}

export interface Commit {
  readonly tree: string;
  readonly parents: readonly string[];
  readonly author: Signature;
  readonly committer: Signature;
  readonly message: string;
}

export function formatTz(offset: number): string {
  const abs = Math.abs(offset);
  return `${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}

function parseTz(text: string): number {
  const sign = text.startsWith('-') ? -1 : 1;
  return sign * (Number(text.slice(1, 3)) * 60 + Number(text.slice(3, 5)));
}

/**
 * git's ident cleaning (ident.c, strbuf_addstr_without_crud): no '<', '>' or newline inside,
 * no crud (whitespace and . , : ; < > " \\ ') at either end — a name can never break the
 * commit's header.
 */
export function cleanIdent(text: string): string {
  const inner = text.replace(/[<>\n]/g, '');
  return inner.replace(/^[\s.,:;<>"\\']+|[\s.,:;<>"\\']+$/g, '');
}

const signature = (s: Signature) => `${s.name} <${s.email}> ${s.time} ${formatTz(s.tzOffset)}`;

export function commit(c: Commit): GitObject {
  const lines = [`tree ${c.tree}`, ...c.parents.map((p) => `parent ${p}`), `author ${signature(c.author)}`, `committer ${signature(c.committer)}`];
  return gitObject('commit', encoder.encode(`${lines.join('\n')}\n\n${c.message}`));
}

function parseSignature(text: string): Signature {
  const match = /^(.*) <(.*)> (-?\d+) ([+-]\d{4})$/.exec(text);
  if (!match) return { name: text, email: '', time: 0, tzOffset: 0 };
  return { name: match[1]!, email: match[2]!, time: Number(match[3]), tzOffset: parseTz(match[4]!) };
}

export function parseCommit(content: Uint8Array): Commit {
  const text = decoder.decode(content);
  const split = text.indexOf('\n\n');
  const header = split < 0 ? text : text.slice(0, split);
  const message = split < 0 ? '' : text.slice(split + 2);
  let treeSha = '';
  const parents: string[] = [];
  let author: Signature | undefined;
  let committer: Signature | undefined;
  for (const line of header.split('\n')) {
    const space = line.indexOf(' ');
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    if (key === 'tree') treeSha = value;
    else if (key === 'parent') parents.push(value);
    else if (key === 'author') author = parseSignature(value);
    else if (key === 'committer') committer = parseSignature(value);
  }
  return { tree: treeSha, parents, author: author!, committer: committer ?? author!, message };
}

// ───────────────────────────── Tags ─────────────────────────────

/** An annotated tag: the object it points to (for the API's tags, always a commit), its name, tagger and message. */
export interface Tag {
  readonly object: string;
  readonly type: ObjectType;
  readonly tag: string;
  /** null: a tag without a tagger line (git allows it; old tags have none). */
  readonly tagger: Signature | null;
  readonly message: string;
}

/** As `git mktag` takes it: `object`, `type`, `tag`, `tagger`, a blank line, the message as given. */
export function tagObject(t: Tag): GitObject {
  const lines = [`object ${t.object}`, `type ${t.type}`, `tag ${t.tag}`, ...(t.tagger ? [`tagger ${signature(t.tagger)}`] : [])];
  return gitObject('tag', encoder.encode(`${lines.join('\n')}\n\n${t.message}`));
}

export function parseTag(content: Uint8Array): Tag {
  const text = decoder.decode(content);
  const split = text.indexOf('\n\n');
  const header = split < 0 ? text : text.slice(0, split);
  const fields = new Map<string, string>();
  for (const line of header.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0 && !fields.has(line.slice(0, space))) fields.set(line.slice(0, space), line.slice(space + 1));
  }
  const tagger = fields.get('tagger');
  return {
    object: fields.get('object') ?? '',
    type: (fields.get('type') ?? 'commit') as ObjectType,
    tag: fields.get('tag') ?? '',
    tagger: tagger === undefined ? null : parseSignature(tagger),
    message: split < 0 ? '' : text.slice(split + 2),
  };
}
