import { spawn, spawnSync } from 'node:child_process';
import { Duplex, PassThrough, Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { Hono, type Context } from 'hono';
import tar from 'tar-stream';
import yazl from 'yazl';
import type { Db } from '../../database/database.js';
import { notFound } from '../../domain/errors.js';
import { MODES, looseObject, type TreeEntry } from '../../domain/repository/objects.js';
import { entryAt, listBranches, loadTrees, readBlobs, resolveCommit } from '../../projections/repository/queries.js';
import { listTags } from '../../projections/repository/tags.js';
import { authenticate, requireAdmin } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { optional, params, t, withDefault, type Shape } from '../kernel/params.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { userProject } from '../kernel/scope.js';

/**
 * A repository as a download: its tree (archive) or its objects (snapshot).
 *
 * GET /projects/:id/repository/archive[.format] (GitLab 12's API::Repositories, which hands
 * `git archive` to Workhorse): the tree of a commit as a tar (gzipped by default) or zip,
 * streamed. Each entry is under GitLab's prefix `<project path>-<ref>-<sha>[-<path>]/`, with
 * git archive's modes (tar.umask 002: 0664 files, 0775 executables and directories) and the
 * commit's time; the commit's SHA is a tar's pax global header comment (`git
 * get-tar-commit-id` reads it) and a zip's comment, as git archive writes them. bzip2 is
 * made by the `bzip2` program (`-c -6`), as Workhorse makes it.
 * The tree is walked in git's order and blobs are read a batch at a time as the client takes
 * them, so memory does not grow with the repository.
 */

/** Gitlab::PathRegex.archive_formats_regex's bzip2 formats. */
const BZIP2 = new Set(['tar.bz2', 'tbz', 'tbz2', 'tb2', 'bz2']);

/** Whether the `bzip2` program runs here (asked once): without it a bzip2 archive fails, as Workhorse's does (404 File). */
let bzip2Runs: boolean | undefined;
const canBzip2 = () => (bzip2Runs ??= spawnSync('bzip2', ['--help'], { stdio: 'ignore' }).status === 0);

/** Repository#archive_file_path's extension: zip, tar, or tar.gz for everything else. */
const extensionOf = (format: string) => (BZIP2.has(format) ? 'tar.bz2' : format === 'tar' || format === 'zip' ? format : 'tar.gz');

const BLOB_BATCH = 100;

interface ArchiveEntry {
  /** The path inside the archive, prefix included; a directory's ends with '/'. */
  readonly path: string;
  readonly mode: string;
  readonly sha: string;
}

const archiveShape = { sha: optional(t.string()), format: optional(t.string()), path: optional(t.string()) } satisfies Shape;
const snapshotShape = { wiki: withDefault(t.boolean(), false) } satisfies Shape;

/** An archive or a snapshot: the file's bytes. */
const ARCHIVE_FILE = { type: 'string', contentMediaType: 'application/octet-stream' } as const;
const ARCHIVE_DOC = { summary: 'Get an archive of the repository', params: archiveShape, auth: 'optional', responses: { 200: ARCHIVE_FILE, ...REFUSED } } as const;

export const repositoryArchiveRoutes = new Hono<AppEnv>()
  .get('/projects/:id/repository/archive', documented(ARCHIVE_DOC), (c) => archive(c, undefined))
  .get('/projects/:id/snapshot', documented({ summary: 'Download a (possibly inconsistent) snapshot of a repository', params: snapshotShape, auth: 'admin', responses: { 200: { type: 'string', contentMediaType: 'application/x-tar' }, ...REFUSED } }), snapshot)
  .get('/projects/:id/repository/:archive{archive\\.(?:zip|tar|tar\\.gz|tgz|gz|tar\\.bz2|tbz|tbz2|tb2|bz2)}', documented(ARCHIVE_DOC), (c) => archive(c, c.req.param('archive').slice('archive.'.length)));

async function archive(c: Context, extension: string | undefined) {
  const auth = await authenticate(c);
  const p = await params(c, archiveShape);
  const project = await userProject(c, auth, 'download_code');
  const { db } = appContext(c);
  const format = extension ?? p.format ?? 'tar.gz';
  // GitLab answers every failure of the archive (an unknown ref, an empty repository) as 404 File.
  const ref = p.sha ?? project.row.default_branch;
  const commit = ref ? await resolveCommit(db, project.row.id, ref) : undefined;
  if (!commit || !ref || (BZIP2.has(format) && !canBzip2())) throw notFound('File');
  const path = (p.path ?? '').split('/').filter((s) => s !== '').join('/');
  const root = path === '' ? { mode: MODES.tree, sha: commit.tree } : await entryAt(db, project.row.id, commit.tree, path);
  if (!root) throw notFound('File');

  // Repository#archive_prefix with append_sha: true.
  const segments = [project.row.path, ref.replaceAll('/', '-'), commit.sha];
  if (p.path !== undefined) segments.push(p.path.replaceAll('/', '-'));
  const prefix = segments.join('-');
  const entries = await walk(db, project.row.id, `${prefix}/`, path, root);
  const mtime = new Date(commit.committer.time * 1000);
  const kind = extensionOf(format);
  const body = kind === 'zip' ? zipOf(db, project.row.id, entries, mtime, commit.sha) : tarOf(db, project.row.id, entries, mtime, commit.sha, kind);
  return c.body(Readable.toWeb(body) as ReadableStream, 200, {
    'Content-Type': kind === 'zip' ? 'application/zip' : 'application/octet-stream',
    'Content-Disposition': `attachment; filename="${prefix}.${kind}"`,
    'Content-Transfer-Encoding': 'binary',
  });
}

/**
 * `git archive <sha> -- <path>`'s entries in its order (read_tree_recursive): a directory,
 * then what it holds, entry by entry; only the trees are read here (loadTrees: a query per depth).
 */
async function walk(db: Db, projectId: number, prefix: string, path: string, root: Pick<TreeEntry, 'mode' | 'sha'>): Promise<ArchiveEntry[]> {
  const trees = root.mode === MODES.tree ? await loadTrees(db, projectId, root.sha) : new Map<string, TreeEntry[]>();
  const entries: ArchiveEntry[] = [{ path: prefix, mode: MODES.tree, sha: '' }];
  const visit = (at: string, entry: Pick<TreeEntry, 'mode' | 'sha'>) => {
    if (entry.mode !== MODES.tree) {
      entries.push({ path: `${prefix}${at}`, mode: entry.mode, sha: entry.sha });
      return;
    }
    if (at !== '') entries.push({ path: `${prefix}${at}/`, mode: MODES.tree, sha: entry.sha });
    for (const child of trees.get(entry.sha) ?? []) visit(at === '' ? child.name : `${at}/${child.name}`, child);
  };
  // A path names its directories on the way down, as git archive lists them.
  const parts = path === '' ? [] : path.split('/');
  for (let i = 1; i < parts.length; i++) entries.push({ path: `${prefix}${parts.slice(0, i).join('/')}/`, mode: MODES.tree, sha: '' });
  visit(path, root);
  return entries;
}

/** git archive's modes under tar.umask 002. */
const archiveMode = (mode: string) => (mode === MODES.tree || mode === MODES.executable ? 0o775 : mode === MODES.symlink ? 0o777 : 0o664);

/** The blobs' contents a batch at a time, in the entries' order. */
async function* contents(db: Db, projectId: number, entries: readonly ArchiveEntry[]): AsyncGenerator<[ArchiveEntry, Buffer]> {
  const files = entries.filter((e) => e.mode !== MODES.tree);
  for (let i = 0; i < files.length; i += BLOB_BATCH) {
    const batch = files.slice(i, i + BLOB_BATCH);
    const blobs = await readBlobs(db, projectId, batch.map((e) => e.sha));
    for (const entry of batch) yield [entry, Buffer.from(blobs.get(entry.sha) ?? new Uint8Array())];
  }
}

function tarOf(db: Db, projectId: number, entries: readonly ArchiveEntry[], mtime: Date, sha: string, kind: 'tar' | 'tar.gz' | 'tar.bz2'): Readable {
  const pack = tar.pack();
  const add = (header: Pick<tar.Header, 'name' | 'type' | 'mode'> & Partial<tar.Header>, data?: Buffer) =>
    new Promise<void>((resolve, reject) => pack.entry({ ...header, uid: 0, gid: 0, uname: 'root', gname: 'root', mtime }, data ?? Buffer.alloc(0), (error) => (error ? reject(error) : resolve())));
  void (async () => {
    const files = contents(db, projectId, entries);
    for (const entry of entries) {
      // Each entry waits for the one before to be taken by the client (tar-stream's backpressure).
      if (entry.mode === MODES.tree) {
        await add({ name: entry.path, type: 'directory', mode: archiveMode(entry.mode) });
        continue;
      }
      const [, data] = (await files.next()).value as [ArchiveEntry, Buffer];
      if (entry.mode === MODES.symlink) await add({ name: entry.path, type: 'symlink', linkname: data.toString('utf8'), mode: archiveMode(entry.mode) });
      else await add({ name: entry.path, type: 'file', mode: archiveMode(entry.mode) }, data);
    }
    pack.finalize();
  })().catch((error: unknown) => pack.destroy(error as Error));
  // Piped into a Node stream either way: the web stream of the response is made from one.
  const out = compressor(kind);
  out.write(paxGlobalHeader(sha, mtime));
  pack.on('error', (error) => out.destroy(error));
  return pack.pipe(out) as unknown as Readable;
}

/** The stream a tar goes through: gzip, bzip2 (the program, as Workhorse runs it, stopped when the client goes) or none. */
function compressor(kind: 'tar' | 'tar.gz' | 'tar.bz2'): Duplex {
  if (kind === 'tar.gz') return createGzip();
  if (kind === 'tar') return new PassThrough();
  const bzip2 = spawn('bzip2', ['-c', '-6'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const duplex = Duplex.from({ writable: bzip2.stdin, readable: bzip2.stdout });
  bzip2.on('error', (error) => duplex.destroy(error));
  duplex.on('close', () => bzip2.kill());
  return duplex;
}

/**
 * git archive's pax global header (archive-tar.c, write_global_extended_header): a ustar block
 * named `pax_global_header`, type `g`, mode 0666, the commit's time, holding the one record
 * `52 comment=<sha>` that `git get-tar-commit-id` reads.
 */
function paxGlobalHeader(sha: string, mtime: Date): Buffer {
  const record = `52 comment=${sha}\n`;
  const block = Buffer.alloc(512);
  const field = (offset: number, length: number, value: string) => block.write(value, offset, length, 'latin1');
  const octal = (value: number, length: number) => `${value.toString(8).padStart(length - 1, '0')}\0`;
  field(0, 100, 'pax_global_header');
  field(100, 8, octal(0o666, 8));
  field(108, 8, octal(0, 8));
  field(116, 8, octal(0, 8));
  field(124, 12, octal(record.length, 12));
  field(136, 12, octal(Math.floor(mtime.getTime() / 1000), 12));
  field(156, 1, 'g');
  field(257, 6, 'ustar\0');
  field(263, 2, '00');
  field(265, 32, 'root');
  field(297, 32, 'root');
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  field(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  const content = Buffer.alloc(512);
  content.write(record, 0, 'latin1');
  return Buffer.concat([block, content]);
}

function zipOf(db: Db, projectId: number, entries: readonly ArchiveEntry[], mtime: Date, sha: string): Readable {
  const zip = new yazl.ZipFile();
  // Contents are read when the zip writer reaches their entry, a batch at a time.
  const files = contents(db, projectId, entries);
  for (const entry of entries) {
    if (entry.mode === MODES.tree) {
      zip.addEmptyDirectory(entry.path, { mtime, mode: 0o40000 | archiveMode(entry.mode) });
      continue;
    }
    const type = entry.mode === MODES.symlink ? 0o120000 : 0o100000;
    zip.addReadStreamLazy(entry.path, { mtime, mode: type | archiveMode(entry.mode), compress: entry.mode !== MODES.symlink }, (cb) => {
      files.next().then(
        ({ value }) => cb(null, Readable.from([(value as [ArchiveEntry, Buffer])[1]])),
        (error: unknown) => cb(error, Readable.from([])),
      );
    });
  }
  zip.end({ comment: sha, forceZip64Format: false });
  return zip.outputStream as Readable;
}

/**
 * GET /projects/:id/snapshot (GitLab 12's API::ProjectSnapshots, Gitaly's GetSnapshot):
 * administrators only (401, 403), then the project (404); the bare repository as a tar —
 * `HEAD`, a file per branch under `refs/heads/` and per tag under `refs/tags/`, every object loose under `objects/` — from
 * which `git clone` makes a working copy. `wiki=true`: forgelog keeps no wiki repositories
 * (404). Objects are read a page at a time as the client takes them.
 */
async function snapshot(c: Context) {
  const auth = await requireAdmin(c);
  const p = await params(c, snapshotShape);
  const project = await userProject(c, auth);
  if (p.wiki) throw notFound();
  const { db } = appContext(c);
  const projectId = project.row.id;
  const branches = await listBranches(db, projectId);
  const tags = await listTags(db, projectId);
  const mtime = new Date();
  const pack = tar.pack();
  const add = (name: string, type: 'file' | 'directory', data?: Buffer) =>
    new Promise<void>((resolve, reject) =>
      pack.entry({ name, type, mode: type === 'directory' ? 0o755 : 0o644, uid: 0, gid: 0, mtime }, data ?? Buffer.alloc(0), (error) => (error ? reject(error) : resolve())),
    );
  void (async () => {
    await add('HEAD', 'file', Buffer.from(`ref: refs/heads/${project.row.default_branch ?? 'master'}\n`));
    for (const folder of ['refs/', 'refs/heads/', 'refs/tags/', 'objects/']) await add(folder, 'directory');
    for (const branch of branches) await add(`refs/heads/${branch.name}`, 'file', Buffer.from(`${branch.sha}\n`));
    for (const tag of tags) await add(`refs/tags/${tag.name}`, 'file', Buffer.from(`${tag.target}\n`));
    let after = '';
    for (;;) {
      const page = await db
        .selectFrom('repository_objects')
        .select(['sha', 'type', 'content'])
        .where('project_id', '=', projectId)
        .where('sha', '>', after)
        .orderBy('sha')
        .limit(SNAPSHOT_PAGE)
        .execute();
      for (const object of page) await add(`objects/${object.sha.slice(0, 2)}/${object.sha.slice(2)}`, 'file', looseObject(object.type, object.content));
      if (page.length < SNAPSHOT_PAGE) break;
      after = page.at(-1)!.sha;
    }
    pack.finalize();
  })().catch((error: unknown) => pack.destroy(error as Error));
  return c.body(Readable.toWeb(pack.pipe(new PassThrough()) as unknown as Readable) as ReadableStream, 200, {
    'Content-Type': 'application/x-tar',
    'Content-Disposition': 'attachment; filename="snapshot.tar"',
    'Content-Transfer-Encoding': 'binary',
    'Cache-Control': 'private',
  });
}

const SNAPSHOT_PAGE = 200;
