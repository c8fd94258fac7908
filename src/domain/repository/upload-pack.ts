import { DELIM, FLUSH, pktLine, type Packet } from './pkt-line.js';

/**
 * `git-upload-pack`'s side of the smart protocol (gitprotocol-pack, gitprotocol-v2,
 * gitprotocol-http), as stateless RPC over HTTP: the ref advertisements, the requests' parsing
 * and the negotiation's answers (ACK / NAK), byte for byte as git's upload-pack.c and
 * ls-refs.c write them. Pure: the route reads the refs and objects and streams the pack.
 *
 * Shallow clones and fetches (`shallow`, `deepen`, `deepen-since`, `deepen-not`,
 * `deepen-relative`): the requests' lines here, the shallow boundary computed by
 * src/projections/repository/shallow.ts. What is not offered is not advertised: no filter, no
 * want-ref, no `no-done`, no `ready` (the client negotiates until it sends `done`; `ready` is
 * optional).
 */

export const ZERO_SHA = '0'.repeat(40);
const SHA = /^[0-9a-fA-F]{40}$/;

/** A refused request; answered as git answers it, an `ERR <message>` packet. */
export class UploadPackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UploadPackError';
  }
}

export interface AdvertisedRef {
  /** `refs/heads/…` or `refs/tags/…`. */
  readonly name: string;
  readonly sha: string;
  /** An annotated tag's commit (`^{}`, `peeled:`). */
  readonly peeled?: string;
}

export interface Refs {
  /** Sorted by name's bytes, as git's ref iteration. */
  readonly refs: readonly AdvertisedRef[];
  /** HEAD's target (`refs/heads/<default branch>`) and its SHA, null while the branch is unborn. */
  readonly head: { readonly target: string; readonly sha: string | null };
}

/**
 * Protocol v0's capabilities. `ofs-delta` and `thin-pack` permit what this server never does
 * (every object is sent whole), so either is harmless to accept.
 */
export const V0_CAPABILITIES = [
  'multi_ack',
  'thin-pack',
  'side-band',
  'side-band-64k',
  'ofs-delta',
  'shallow',
  'deepen-since',
  'deepen-not',
  'deepen-relative',
  'no-progress',
  'include-tag',
  'multi_ack_detailed',
  'allow-tip-sha1-in-want',
  'allow-reachable-sha1-in-want',
] as const;

const line = (text: string) => pktLine(`${text}\n`);

/** `# service=git-upload-pack` and a flush: what a v0 smart `info/refs` starts with. */
export const serviceHeader = (): Buffer => Buffer.concat([line('# service=git-upload-pack'), FLUSH]);

/**
 * v0's advertisement (upload-pack.c, send_ref): HEAD first with the capabilities after a
 * NUL, the refs by name, each annotated tag followed by its `^{}` line, a flush. No ref at
 * all: `0000…0000 capabilities^{}`.
 */
export function advertiseV0(refs: Refs, agent: string): Buffer {
  const capabilities = [...V0_CAPABILITIES, ...(refs.head.sha ? [`symref=HEAD:${refs.head.target}`] : []), 'object-format=sha1', `agent=${agent}`].join(' ');
  const entries: [string, string][] = [];
  if (refs.head.sha) entries.push([refs.head.sha, 'HEAD']);
  for (const ref of refs.refs) {
    entries.push([ref.sha, ref.name]);
    if (ref.peeled) entries.push([ref.peeled, `${ref.name}^{}`]);
  }
  if (entries.length === 0) entries.push([ZERO_SHA, 'capabilities^{}']);
  const packets = entries.map(([sha, name], i) => line(i === 0 ? `${sha} ${name}\0${capabilities}` : `${sha} ${name}`));
  return Buffer.concat([...packets, FLUSH]);
}

/** v2's capability advertisement (serve.c). */
export function advertiseV2(agent: string): Buffer {
  return Buffer.concat(['version 2', `agent=${agent}`, 'ls-refs=unborn', 'fetch=shallow', 'server-option', 'object-format=sha1'].map(line).concat(FLUSH));
}

// ───────────────────────────── Requests ─────────────────────────────

const text = (packet: Packet & { type: 'data' }) => packet.data.toString('utf8').replace(/\n$/, '');

function objectId(value: string, line: string): string {
  // upload-pack.c: "git upload-pack: protocol error, expected to get object ID, not '%s'"
  if (!SHA.test(value)) throw new UploadPackError(`upload-pack: protocol error, expected to get object ID, not '${line}'`);
  return value.toLowerCase();
}

export type MultiAck = 'none' | 'multi_ack' | 'multi_ack_detailed';

/** `deepen 2147483647`: what `git fetch --unshallow` asks (INFINITE_DEPTH). */
export const INFINITE_DEPTH = 0x7fffffff;

/** A shallow client's lines: what it has shallow, and how deep it wants the history. */
export interface ShallowRequest {
  /** `shallow <sha>`: the client's shallow commits. */
  readonly shallows: readonly string[];
  /** `deepen <n>`; 0 when not asked. */
  readonly depth: number;
  /** `deepen-since <seconds>`: no commit older; null when not asked. */
  readonly deepenSince: number | null;
  /** `deepen-not <ref>`: no commit reachable from these refs (as the client names them). */
  readonly deepenNot: readonly string[];
  /** `deepen-relative`: `depth` counts from the client's shallow commits, not from the wants. */
  readonly deepenRelative: boolean;
}

export const NO_SHALLOW: ShallowRequest = { shallows: [], depth: 0, deepenSince: null, deepenNot: [], deepenRelative: false };

/** Does the request ask for a new shallow boundary (deepen, deepen-since or deepen-not)? */
export const deepens = (request: ShallowRequest): boolean => request.depth > 0 || request.deepenSince !== null || request.deepenNot.length > 0;

/**
 * One shallow line of a request (upload-pack.c: process_shallow, process_deepen,
 * process_deepen_since, process_deepen_not), into `into`; false when the line is none of them.
 */
function shallowLine(text: string, into: { shallows: string[]; depth: number; deepenSince: number | null; deepenNot: string[] }): boolean {
  if (text.startsWith('shallow ')) {
    // upload-pack.c: "invalid shallow line: %s"
    if (!SHA.test(text.slice(8))) throw new UploadPackError(`invalid shallow line: ${text}`);
    const sha = text.slice(8).toLowerCase();
    if (!into.shallows.includes(sha)) into.shallows.push(sha);
    return true;
  }
  if (text.startsWith('deepen ')) {
    const value = text.slice(7);
    // upload-pack.c: "Invalid deepen: %s" (strtol into an int, more than 0)
    if (!/^\d{1,10}$/.test(value) || Number(value) <= 0 || Number(value) > INFINITE_DEPTH) throw new UploadPackError(`Invalid deepen: ${text}`);
    into.depth = Number(value);
    return true;
  }
  if (text.startsWith('deepen-since ')) {
    const value = text.slice(13);
    // upload-pack.c: "Invalid deepen-since: %s"
    if (!/^\d{1,15}$/.test(value)) throw new UploadPackError(`Invalid deepen-since: ${text}`);
    into.deepenSince = Number(value);
    return true;
  }
  if (text.startsWith('deepen-not ')) {
    into.deepenNot.push(text.slice(11));
    return true;
  }
  return false;
}

function shallowRequest(lines: { shallows: string[]; depth: number; deepenSince: number | null; deepenNot: string[] }, deepenRelative: boolean): ShallowRequest {
  const request = { ...lines, deepenRelative };
  // upload-pack.c (send_shallow_list)
  if (request.depth > 0 && (request.deepenSince !== null || request.deepenNot.length > 0)) {
    throw new UploadPackError('git upload-pack: deepen and deepen-since (or deepen-not) cannot be used together');
  }
  return request;
}

export interface FetchOptions {
  readonly wants: readonly string[];
  readonly haves: readonly string[];
  readonly done: boolean;
  readonly includeTag: boolean;
  /** Packet size of side-band (1000) or side-band-64k (65520); null: the pack raw (v0 without side-band). */
  readonly sideband: number | null;
  readonly progress: boolean;
  readonly shallow: ShallowRequest;
}

export interface V0Fetch extends FetchOptions {
  readonly multiAck: MultiAck;
  /**
   * Whether anything follows the want list's flush. A stateless shallow client's first
   * request ends there: it is answered with the shallow lines alone (upload-pack.c: EOF after
   * receive_needs).
   */
  readonly negotiates: boolean;
}

/**
 * A v0 request (stateless RPC: one round): `want <sha>[ <capabilities>]` lines, a flush, then
 * the `have` lines so far, ended by `done` (the last round) or a flush.
 */
export function parseV0(packets: readonly Packet[]): V0Fetch {
  const wants: string[] = [];
  const haves: string[] = [];
  const lines = { shallows: [] as string[], depth: 0, deepenSince: null as number | null, deepenNot: [] as string[] };
  let capabilities = new Set<string>();
  let done = false;
  let i = 0;
  for (; i < packets.length; i++) {
    const packet = packets[i]!;
    if (packet.type === 'flush') break;
    if (packet.type !== 'data') throw new UploadPackError('upload-pack: protocol error, unexpected delimiter');
    const want = text(packet);
    if (shallowLine(want, lines)) continue;
    const match = /^want ([^ ]*)(?: (.*))?$/.exec(want);
    if (!match) throw new UploadPackError(`upload-pack: protocol error, expected to get 'want', not '${want}'`);
    wants.push(objectId(match[1]!, want));
    if (wants.length === 1 && match[2]) capabilities = new Set(match[2].split(' '));
  }
  const negotiates = i + 1 < packets.length;
  for (i++; i < packets.length; i++) {
    const packet = packets[i]!;
    if (packet.type === 'flush') break;
    if (packet.type !== 'data') throw new UploadPackError('upload-pack: protocol error, unexpected delimiter');
    const have = text(packet);
    if (have === 'done') {
      done = true;
      break;
    }
    // upload-pack.c: "git upload-pack: expected SHA1 list, got '%s'"
    if (!have.startsWith('have ')) throw new UploadPackError(`upload-pack: expected SHA1 list, got '${have}'`);
    haves.push(objectId(have.slice(5), have));
  }
  const sideband = capabilities.has('side-band-64k') ? 65520 : capabilities.has('side-band') ? 1000 : null;
  return {
    wants,
    haves,
    done,
    multiAck: capabilities.has('multi_ack_detailed') ? 'multi_ack_detailed' : capabilities.has('multi_ack') ? 'multi_ack' : 'none',
    includeTag: capabilities.has('include-tag'),
    sideband,
    progress: sideband !== null && !capabilities.has('no-progress'),
    shallow: shallowRequest(lines, capabilities.has('deepen-relative')),
    negotiates,
  };
}

/**
 * v0's answer to the haves (upload-pack.c, get_common_commits): `common` holds those that are
 * objects of the project. With multi_ack_detailed each common have is `ACK <sha> common`, with
 * multi_ack `ACK <sha> continue`, without either only the first is acknowledged; then, after
 * `done`, the last common one as `ACK <sha>` (or NAK with none), or NAK at the round's flush.
 */
export function negotiateV0(request: V0Fetch, common: ReadonlySet<string>): Buffer {
  const out: Buffer[] = [];
  const had = new Set<string>();
  let last: string | null = null;
  for (const sha of request.haves) {
    if (!common.has(sha)) continue;
    had.add(sha);
    last = sha;
    if (request.multiAck === 'multi_ack_detailed') out.push(line(`ACK ${sha} common`));
    else if (request.multiAck === 'multi_ack') out.push(line(`ACK ${sha} continue`));
    else if (had.size === 1) out.push(line(`ACK ${sha}`));
  }
  if (request.done) {
    if (last === null) out.push(line('NAK'));
    else if (request.multiAck !== 'none') out.push(line(`ACK ${last}`));
  } else if (last === null || request.multiAck !== 'none') out.push(line('NAK'));
  return Buffer.concat(out);
}

export type V2Request =
  | { readonly command: 'ls-refs'; readonly peel: boolean; readonly symrefs: boolean; readonly unborn: boolean; readonly prefixes: readonly string[] }
  | ({ readonly command: 'fetch' } & FetchOptions);

const CAPABILITY_KEYS = new Set(['agent', 'object-format', 'server-option', 'session-id']);

/**
 * A v2 request: `command=<name>` and capabilities, a delimiter, the command's arguments, a
 * flush (serve.c, process_request; ls-refs.c; upload-pack.c, process_args).
 */
export function parseV2(packets: readonly Packet[]): V2Request {
  let command: string | null = null;
  let i = 0;
  for (; i < packets.length && packets[i]!.type === 'data'; i++) {
    const capability = text(packets[i] as Packet & { type: 'data' });
    const [key, value] = capability.includes('=') ? [capability.slice(0, capability.indexOf('=')), capability.slice(capability.indexOf('=') + 1)] : [capability, null];
    if (key === 'command') {
      // serve.c: "command '%s' requested after already requesting command '%s'"
      if (command !== null) throw new UploadPackError(`command '${value}' requested after already requesting command '${command}'`);
      command = value;
    } else if (!CAPABILITY_KEYS.has(key)) throw new UploadPackError(`unknown capability '${capability}'`);
    else if (key === 'object-format' && value !== 'sha1') throw new UploadPackError(`mismatched object format: server sha1; client ${value}`);
  }
  if (command === null) throw new UploadPackError('no command requested');
  if (command !== 'ls-refs' && command !== 'fetch') throw new UploadPackError(`invalid command '${command}'`);
  const args: string[] = [];
  if (packets[i]?.type === 'delim') {
    for (i++; i < packets.length && packets[i]!.type === 'data'; i++) args.push(text(packets[i] as Packet & { type: 'data' }));
  }
  if (packets[i]?.type !== 'flush') throw new UploadPackError('expected flush after arguments');
  return command === 'ls-refs' ? lsRefsArguments(args) : fetchArguments(args);
}

function lsRefsArguments(args: readonly string[]): V2Request {
  let peel = false;
  let symrefs = false;
  let unborn = false;
  const prefixes: string[] = [];
  for (const arg of args) {
    if (arg === 'peel') peel = true;
    else if (arg === 'symrefs') symrefs = true;
    else if (arg === 'unborn') unborn = true;
    else if (arg.startsWith('ref-prefix ')) prefixes.push(arg.slice('ref-prefix '.length));
    else throw new UploadPackError(`unexpected line: '${arg}'`);
  }
  return { command: 'ls-refs', peel, symrefs, unborn, prefixes };
}

function fetchArguments(args: readonly string[]): V2Request {
  const wants: string[] = [];
  const haves: string[] = [];
  let done = false;
  let includeTag = false;
  let progress = true;
  let deepenRelative = false;
  const lines = { shallows: [] as string[], depth: 0, deepenSince: null as number | null, deepenNot: [] as string[] };
  for (const arg of args) {
    if (shallowLine(arg, lines)) continue;
    if (arg === 'deepen-relative') deepenRelative = true;
    else if (arg.startsWith('want ')) wants.push(objectId(arg.slice(5), arg));
    else if (arg.startsWith('have ')) haves.push(objectId(arg.slice(5), arg));
    else if (arg === 'done') done = true;
    else if (arg === 'include-tag') includeTag = true;
    else if (arg === 'no-progress') progress = false;
    else if (arg !== 'thin-pack' && arg !== 'ofs-delta') throw new UploadPackError(`upload-pack: unexpected line: '${arg}'`);
  }
  return { command: 'fetch', wants, haves, done, includeTag, sideband: 65520, progress, shallow: shallowRequest(lines, deepenRelative) };
}

// ───────────────────────────── Answers (v2) ─────────────────────────────

/** ls-refs' answer: HEAD (or, asked, an unborn HEAD), then the refs the prefixes allow, a flush. */
export function lsRefs(refs: Refs, request: Extract<V2Request, { command: 'ls-refs' }>): Buffer {
  const allowed = (name: string) => request.prefixes.length === 0 || request.prefixes.some((prefix) => name.startsWith(prefix));
  const out: Buffer[] = [];
  const symref = request.symrefs ? ` symref-target:${refs.head.target}` : '';
  if (allowed('HEAD')) {
    if (refs.head.sha) out.push(line(`${refs.head.sha} HEAD${symref}`));
    else if (request.unborn) out.push(line(`unborn HEAD${symref}`));
  }
  for (const ref of refs.refs) {
    if (allowed(ref.name)) out.push(line(`${ref.sha} ${ref.name}${request.peel && ref.peeled ? ` peeled:${ref.peeled}` : ''}`));
  }
  return Buffer.concat([...out, FLUSH]);
}

/**
 * fetch's acknowledgments section, sent while the client has not said `done`: each common
 * have (or NAK), then a flush — never `ready`, so the client goes on until `done`.
 */
export function acknowledgments(haves: readonly string[], common: ReadonlySet<string>): Buffer {
  const acked = [...new Set(haves.filter((sha) => common.has(sha)))];
  return Buffer.concat([line('acknowledgments'), ...(acked.length === 0 ? [line('NAK')] : acked.map((sha) => line(`ACK ${sha}`))), FLUSH]);
}

// ───────────────────────────── Shallow answers ─────────────────────────────

/** The new shallow boundary and the client's commits that stop being shallow. */
export interface ShallowUpdate {
  readonly shallow: readonly string[];
  readonly unshallow: readonly string[];
}

const shallowLines = (update: ShallowUpdate) => [...update.shallow.map((sha) => line(`shallow ${sha}`)), ...update.unshallow.map((sha) => line(`unshallow ${sha}`))];

/** v0's shallow update (upload-pack.c, send_shallow / send_unshallow), ended by a flush; sent before the ACKs. */
export const shallowUpdateV0 = (update: ShallowUpdate): Buffer => Buffer.concat([...shallowLines(update), FLUSH]);

/** v2's `shallow-info` section before the packfile, ended by a delimiter. */
export const shallowInfo = (update: ShallowUpdate): Buffer => Buffer.concat([line('shallow-info'), ...shallowLines(update), DELIM]);

/**
 * The refs a `deepen-not <name>` names, as git's expand_ref finds them (the name itself, then
 * under refs/, refs/tags/, refs/heads/, refs/remotes/, refs/remotes/…/HEAD): their commits
 * (peeled). More than one or none is git's "ambiguous deepen-not".
 */
export function resolveDeepenNot(refs: Refs, name: string): string {
  const byName = new Map(refs.refs.map((ref) => [ref.name, ref.peeled ?? ref.sha]));
  if (refs.head.sha) byName.set('HEAD', refs.head.sha);
  const found = [name, `refs/${name}`, `refs/tags/${name}`, `refs/heads/${name}`, `refs/remotes/${name}`, `refs/remotes/${name}/HEAD`].filter((candidate) => byName.has(candidate));
  // upload-pack.c: "git upload-pack: ambiguous deepen-not: %s"
  if (found.length !== 1) throw new UploadPackError(`git upload-pack: ambiguous deepen-not: deepen-not ${name}`);
  return byName.get(found[0]!)!;
}

/** The section header before a v2 pack. */
export const packfileHeader = (): Buffer => line('packfile');

/** An `ERR` packet: the client prints `remote error: <message>` and stops. */
export const errorPacket = (message: string): Buffer => pktLine(`ERR ${message}\n`);
