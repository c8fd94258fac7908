import { validBranchName } from './decider.js';
import type { GitObject, ObjectType } from './objects.js';
import { FLUSH, type Packet, pktLine, sideband } from './pkt-line.js';

/**
 * `git-receive-pack`'s side of the smart protocol (gitprotocol-pack, "Pushing Data To a
 * Server"), as stateless RPC over HTTP: the ref advertisement, the request's command list,
 * which ref write each command is, the pushed objects' sanity (what `git index-pack --strict`
 * checks of a commit, tree or tag) and their connectivity, and the report-status answer,
 * byte for byte as git's receive-pack.c writes them. Pure: the route reads the body and the
 * repository, the command (src/commands/repository-push.ts) writes.
 */

export const ZERO_SHA = '0'.repeat(40);
const SHA = /^[0-9a-f]{40}$/;

/** A request receive-pack refuses outright (git dies with the message: the route answers 400). */
export class ReceivePackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReceivePackError';
  }
}

// ───────────────────────────── Advertisement ─────────────────────────────

/**
 * What is offered (receive-pack.c, show_ref, in its order): report-status, deletions,
 * side-band-64k, quiet, atomic (every push here is atomic anyway), OFS_DELTA in the pack and
 * push options (GitLab's `merge_request.*` and `ci.skip`: ./push-options.ts). Not offered:
 * push certificates, report-status-v2.
 */
export const RECEIVE_CAPABILITIES = ['report-status', 'delete-refs', 'side-band-64k', 'quiet', 'atomic', 'ofs-delta', 'push-options', 'object-format=sha1'] as const;

const line = (text: string) => pktLine(`${text}\n`);

/** `# service=git-receive-pack` and a flush: what a smart `info/refs` starts with. */
export const receiveServiceHeader = (): Buffer => Buffer.concat([line('# service=git-receive-pack'), FLUSH]);

/**
 * The advertisement: each ref (by name; no peeled `^{}` lines, as receive-pack sends none)
 * with the capabilities after the first one's NUL; none at all: `0000…0000 capabilities^{}`.
 */
export function advertiseReceivePack(refs: readonly { readonly name: string; readonly sha: string }[], agent: string): Buffer {
  const capabilities = [...RECEIVE_CAPABILITIES, `agent=${agent}`].join(' ');
  const entries = refs.length === 0 ? [{ name: 'capabilities^{}', sha: ZERO_SHA }] : refs;
  return Buffer.concat([...entries.map((ref, i) => line(i === 0 ? `${ref.sha} ${ref.name}\0${capabilities}` : `${ref.sha} ${ref.name}`)), FLUSH]);
}

// ───────────────────────────── The request ─────────────────────────────

export interface PushCommand {
  readonly oldSha: string;
  readonly newSha: string;
  readonly ref: string;
}

export interface ReceiveRequest {
  readonly commands: readonly PushCommand[];
  readonly capabilities: ReadonlySet<string>;
  /** `git push -o`: the push options after the commands' flush (with the `push-options` capability). */
  readonly pushOptions: readonly string[];
}

/** The capabilities after the first command's NUL (a command list's first packet). */
export function requestCapabilities(first: Packet | undefined): Set<string> {
  if (first?.type !== 'data') return new Set();
  const text = first.data.toString('utf8').replace(/\n$/, '');
  const nul = text.indexOf('\0');
  return new Set(nul < 0 ? [] : text.slice(nul + 1).split(' ').filter((c) => c !== ''));
}

/**
 * The command list, up to its flush: `<old> <new> <ref>`, the first with `\0` and the
 * client's capabilities; then, when the client asked for `push-options`, one option a packet
 * up to a second flush (receive-pack.c, read_push_options). A shallow client's `shallow`
 * lines are refused (receive.shallowUpdate is off, as git's default).
 */
export function parseCommands(packets: readonly Packet[]): ReceiveRequest {
  const commands: PushCommand[] = [];
  let capabilities = new Set<string>();
  let at = 0;
  for (; at < packets.length; at++) {
    const packet = packets[at]!;
    if (packet.type === 'flush') break;
    if (packet.type !== 'data') throw new ReceivePackError('protocol error: unexpected packet');
    let text = packet.data.toString('utf8').replace(/\n$/, '');
    if (text.startsWith('shallow ')) throw new ReceivePackError('shallow update not allowed');
    const nul = text.indexOf('\0');
    if (nul >= 0) {
      if (commands.length === 0) capabilities = new Set(text.slice(nul + 1).split(' ').filter((c) => c !== ''));
      text = text.slice(0, nul);
    }
    // receive-pack.c: "protocol error: expected old/new/ref, got '%s'"
    const match = /^([0-9a-f]{40}) ([0-9a-f]{40}) (.+)$/.exec(text);
    if (!match) throw new ReceivePackError(`protocol error: expected old/new/ref, got '${text}'`);
    commands.push({ oldSha: match[1]!, newSha: match[2]!, ref: match[3]! });
  }
  const pushOptions: string[] = [];
  if (capabilities.has('push-options')) {
    for (at++; at < packets.length; at++) {
      const packet = packets[at]!;
      if (packet.type === 'flush') break;
      if (packet.type !== 'data') throw new ReceivePackError('protocol error: unexpected packet');
      pushOptions.push(packet.data.toString('utf8').replace(/\n$/, ''));
    }
  }
  return { commands, capabilities, pushOptions };
}

/** Whether the request carries a pack: git sends none when every command deletes. */
export const expectsPack = (commands: readonly PushCommand[]) => commands.some((c) => c.newSha !== ZERO_SHA);

// ───────────────────────────── Ref writes ─────────────────────────────

export type RefAction = 'create' | 'update' | 'delete';

export type RefUpdate =
  | { readonly kind: 'branch' | 'tag'; readonly action: RefAction; readonly ref: string; readonly name: string; readonly oldSha: string; readonly newSha: string }
  /** A command no ref write can carry out, with its `ng` reason. */
  | { readonly kind: 'refused'; readonly ref: string; readonly reason: string };

/** Why a ref outside refs/heads/ and refs/tags/ is refused. */
export const REFUSALS = {
  // receive-pack.c: a ref name check-ref-format refuses.
  funny: 'funny refname',
  // GitLab hides refs/merge-requests/ (and refs/keep-around/, refs/environments/, refs/pipelines/) from pushes: git's word for a hidden ref.
  hidden: 'deny updating a hidden ref',
  other: 'only branches (refs/heads/*) and tags (refs/tags/*) can be pushed',
} as const;

const HIDDEN = ['refs/merge-requests/', 'refs/keep-around/', 'refs/environments/', 'refs/pipelines/'];

/** Which ref write a command is: a branch's or a tag's creation, move or deletion (by its old and new values), or refused. */
export function classify(command: PushCommand): RefUpdate {
  const { ref, oldSha, newSha } = command;
  if (!ref.startsWith('refs/') || (oldSha === ZERO_SHA && newSha === ZERO_SHA)) return { kind: 'refused', ref, reason: REFUSALS.funny };
  if (HIDDEN.some((prefix) => ref.startsWith(prefix))) return { kind: 'refused', ref, reason: REFUSALS.hidden };
  const kind = ref.startsWith('refs/heads/') ? 'branch' : ref.startsWith('refs/tags/') ? 'tag' : null;
  if (kind === null) return { kind: 'refused', ref, reason: REFUSALS.other };
  const name = ref.slice(kind === 'branch' ? 'refs/heads/'.length : 'refs/tags/'.length);
  if (!validBranchName(name)) return { kind: 'refused', ref, reason: REFUSALS.funny };
  const action: RefAction = oldSha === ZERO_SHA ? 'create' : newSha === ZERO_SHA ? 'delete' : 'update';
  return { kind, action, ref, name, oldSha, newSha };
}

// ───────────────────────────── Object sanity ─────────────────────────────

/** A reference from one object to another, and the type it must have (null: a gitlink, never followed). */
export interface Link {
  readonly sha: string;
  readonly type: ObjectType;
}

/** An object whose content git's fsck refuses; the message as `git fsck` words it. */
export class FsckError extends Error {
  constructor(sha: string, id: string, detail: string) {
    super(`object ${sha}: ${id}: ${detail}`);
    this.name = 'FsckError';
  }
}

const IDENT = /^[^<>\n]* <[^<>\n]*> \d+ [+-]\d{4}$/;
const TREE_MODES: Readonly<Record<string, ObjectType | null>> = { '100644': 'blob', '100755': 'blob', '120000': 'blob', '40000': 'tree', '160000': null };
const latin1 = (bytes: Uint8Array, from: number, to: number) => Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('latin1');

/** A commit's header (fsck_commit): tree, parents, author, committer in that order. */
function commitLinks(object: GitObject): Link[] {
  const fail = (id: string, detail: string) => new FsckError(object.sha, id, detail);
  const content = Buffer.from(object.content.buffer, object.content.byteOffset, object.content.length);
  const end = content.indexOf('\n\n');
  const header = content.toString('utf8', 0, end < 0 ? content.length : end).split('\n');
  let at = 0;
  const next = () => header[at++] ?? '';
  const tree = next();
  if (!tree.startsWith('tree ')) throw fail('missingTree', "invalid format - expected 'tree' line");
  if (!SHA.test(tree.slice(5))) throw fail('badTreeSha1', 'invalid \'tree\' line format - bad sha1');
  const links: Link[] = [{ sha: tree.slice(5), type: 'tree' }];
  while (header[at]?.startsWith('parent ')) {
    const parent = next().slice(7);
    if (!SHA.test(parent)) throw fail('badParentSha1', "invalid 'parent' line format - bad sha1");
    links.push({ sha: parent, type: 'commit' });
  }
  const author = next();
  if (!author.startsWith('author ')) throw fail('missingAuthor', "invalid format - expected 'author' line");
  if (!IDENT.test(author.slice(7))) throw fail('badIdent', 'invalid author line');
  const committer = next();
  if (!committer.startsWith('committer ')) throw fail('missingCommitter', "invalid format - expected 'committer' line");
  if (!IDENT.test(committer.slice(10))) throw fail('badIdent', 'invalid committer line');
  return links;
}

/** A tree's entries (fsck_tree): whole, with git's modes, proper names, sorted, each once. */
function treeLinks(object: GitObject): Link[] {
  const fail = (id: string, detail: string) => new FsckError(object.sha, id, detail);
  const content = object.content;
  const links: Link[] = [];
  let previous: Buffer | null = null;
  for (let i = 0; i < content.length; ) {
    const space = content.indexOf(0x20, i);
    const nul = space < 0 ? -1 : content.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw fail('badTree', 'cannot be parsed as a tree');
    const mode = latin1(content, i, space);
    const type = TREE_MODES[mode];
    if (type === undefined) throw fail('badFilemode', `contains bad file modes: ${mode}`);
    const name = Buffer.from(content.subarray(space + 1, nul));
    const text = name.toString('latin1');
    if (text === '') throw fail('emptyName', 'contains empty pathname');
    if (text.includes('/')) throw fail('fullPathname', 'contains full pathnames');
    if (text === '.' || text === '..') throw fail('hasDot', `contains '${text}'`);
    if (text.toLowerCase() === '.git') throw fail('hasDotgit', "contains '.git'");
    // git's order: a tree's name compared as if it ended with '/'.
    const key = type === 'tree' ? Buffer.concat([name, Buffer.from('/')]) : name;
    if (previous !== null) {
      const order = Buffer.compare(previous, key);
      if (order === 0) throw fail('duplicateEntries', 'contains duplicate file entries');
      if (order > 0) throw fail('treeNotSorted', 'not properly sorted');
    }
    previous = key;
    if (type !== null) links.push({ sha: Buffer.from(content.subarray(nul + 1, nul + 21)).toString('hex'), type });
    i = nul + 21;
  }
  return links;
}

/** An annotated tag's header (fsck_tag): object, type, tag, and a well-formed tagger when there is one. */
function tagLinks(object: GitObject): Link[] {
  const fail = (id: string, detail: string) => new FsckError(object.sha, id, detail);
  const content = Buffer.from(object.content.buffer, object.content.byteOffset, object.content.length);
  const end = content.indexOf('\n\n');
  const header = content.toString('utf8', 0, end < 0 ? content.length : end).split('\n');
  const [target, type, name, tagger] = header;
  if (!target?.startsWith('object ') || !SHA.test(target.slice(7))) throw fail('missingObject', "invalid format - expected 'object' line");
  if (!type?.startsWith('type ')) throw fail('missingTypeEntry', "invalid format - expected 'type' line");
  const kind = type.slice(5);
  if (kind !== 'commit' && kind !== 'tree' && kind !== 'blob' && kind !== 'tag') throw fail('badType', 'invalid \'type\' value');
  if (!name?.startsWith('tag ') || name.length === 4) throw fail('missingTagEntry', "invalid format - expected 'tag' line");
  if (tagger?.startsWith('tagger ') && !IDENT.test(tagger.slice(7))) throw fail('badIdent', 'invalid tagger line');
  return [{ sha: target.slice(7), type: kind }];
}

/** What an object points to, after checking it is sane (a blob points to nothing); throws FsckError. */
export function objectLinks(object: GitObject): Link[] {
  switch (object.type) {
    case 'commit':
      return commitLinks(object);
    case 'tree':
      return treeLinks(object);
    case 'tag':
      return tagLinks(object);
    default:
      return [];
  }
}

// ───────────────────────────── Connectivity ─────────────────────────────

export interface Walked {
  /** The pushed objects reachable from the tips: those the push stores. */
  readonly reachable: ReadonlySet<string>;
  /** What they point to outside the pack, with the type each must have: the repository must have them. */
  readonly outside: ReadonlyMap<string, ObjectType | null>;
}

/**
 * The walk from the new tips through the pushed objects only (git's `rev-list --objects
 * <tips> --not --all` stops at what the repository has; here, at what the pack lacks): an
 * object the repository already has is connected, since it only ever stores connected
 * objects. A link to a pushed object of another type than the one it must have is an
 * FsckError. `links(sha)`: the links of a pushed object (objectLinks, computed once).
 */
export function walkPushed(tips: readonly string[], pushed: ReadonlyMap<string, GitObject>, links: (object: GitObject) => readonly Link[]): Walked {
  const reachable = new Set<string>();
  const outside = new Map<string, ObjectType | null>();
  const stack: { sha: string; type: ObjectType | null; from: string | null }[] = tips.map((sha) => ({ sha, type: null, from: null }));
  while (stack.length > 0) {
    const { sha, type, from } = stack.pop()!;
    const object = pushed.get(sha);
    if (!object) {
      if (!outside.has(sha) || outside.get(sha) === null) outside.set(sha, type);
      continue;
    }
    if (type !== null && object.type !== type) throw new FsckError(from ?? sha, 'badObjectType', `points to ${sha}, a ${object.type}, where a ${type} must be`);
    if (reachable.has(sha)) continue;
    reachable.add(sha);
    for (const link of links(object)) stack.push({ sha: link.sha, type: link.type, from: sha });
  }
  return { reachable, outside };
}

// ───────────────────────────── report-status ─────────────────────────────

export interface RefStatus {
  readonly ref: string;
  /** null: `ok`; else the `ng` reason. */
  readonly error: string | null;
}

export interface Report {
  /** null: `unpack ok`; else the unpack error. */
  readonly unpack: string | null;
  readonly refs: readonly RefStatus[];
  /** Lines for the client's `remote:` output (side-band channel 2), each ending with a newline. */
  readonly messages: readonly string[];
}

/** One line of an `ng` reason or a message: a packet holds no newline of its own. */
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

/**
 * The answer (receive-pack.c, report): `unpack ok` or `unpack <error>`, an `ok <ref>` or
 * `ng <ref> <reason>` per command, a flush. With side-band-64k, the messages first on channel
 * 2, the report inside channel 1, then a flush; without it, the report alone (the messages
 * are lost, as git's are).
 */
export function reportStatus(report: Report, sidebandWanted: boolean): Buffer {
  const status = Buffer.concat([
    line(report.unpack === null ? 'unpack ok' : `unpack ${oneLine(report.unpack)}`),
    ...report.refs.map((r) => line(r.error === null ? `ok ${r.ref}` : `ng ${r.ref} ${oneLine(r.error)}`)),
    FLUSH,
  ]);
  if (!sidebandWanted) return status;
  return Buffer.concat([...report.messages.map((m) => sideband(2, m)), sideband(1, status), FLUSH]);
}
