import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** GET /projects/:id/repository/archive[.format] and GET /projects/:id/snapshot (issue 23 §3), unpacked by the real tar, unzip and git. */

let api: TestServer;
let project: { id: number; path: string };
let head: string;
let dir: string;

const download = async (path: string, token: string | null = api.rootToken) => {
  const response = await fetch(`${api.apiUrl}/projects/${project.id}/repository/${path}`, token ? { headers: { 'PRIVATE-TOKEN': token } } : {});
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
};
/** Unpacks an archive with the system's tools into a fresh folder; answers the folder. */
function unpack(bytes: Buffer, kind: 'tar.gz' | 'tar.bz2' | 'tar' | 'zip'): string {
  const into = mkdtempSync(join(dir, 'x-'));
  const file = join(into, `archive.${kind}`);
  writeFileSync(file, bytes);
  if (kind === 'zip') execFileSync('/usr/bin/unzip', ['-q', file, '-d', into]);
  else execFileSync('/usr/bin/tar', [kind === 'tar' ? '-xf' : kind === 'tar.bz2' ? '-xjf' : '-xzf', file, '-C', into]);
  rmSync(file);
  return into;
}
/** `git get-tar-commit-id`: the commit's SHA a tar carries in its pax global header, as git archive writes it. */
const tarCommitId = (tarBytes: Buffer) => execFileSync('/usr/bin/git', ['get-tar-commit-id'], { input: tarBytes, encoding: 'utf8' }).trim();
const listing = (bytes: Buffer, kind: 'tar.gz' | 'tar') => {
  const file = join(mkdtempSync(join(dir, 'l-')), 'a');
  writeFileSync(file, bytes);
  return execFileSync('/usr/bin/tar', [kind === 'tar' ? '-tvf' : '-tzvf', file], { encoding: 'utf8' });
};

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  dir = mkdtempSync(join(tmpdir(), 'forgelog-archive-'));
  const created = await createProject(api);
  project = { id: created.id, path: created.path_with_namespace.split('/').at(-1)! };
  const res = await api.post(`/projects/${project.id}/repository/commits`, {
    branch: 'master',
    commit_message: 'Files',
    actions: [
      { action: 'create', file_path: 'README.md', content: '# Archive\n' },
      { action: 'create', file_path: 'docs/guide.md', content: 'guide\n' },
      { action: 'create', file_path: 'docs/deep/note.txt', content: 'deep\n' },
      { action: 'create', file_path: 'bin/run.sh', content: '#!/bin/sh\n' },
    ],
  });
  expect(res.status, res.text).toBe(201);
  const chmod = await api.post(`/projects/${project.id}/repository/commits`, {
    branch: 'master',
    commit_message: 'Executable',
    actions: [{ action: 'chmod', file_path: 'bin/run.sh', execute_filemode: true }],
  });
  expect(chmod.status, chmod.text).toBe(201);
  head = chmod.body.id;
  expect((await api.post(`/projects/${project.id}/repository/branches`, { branch: 'feature/x', ref: 'master' })).status).toBe(201);
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await api.close();
});

describe('GET /projects/:id/repository/archive', () => {
  it("is a tar.gz of the default branch under GitLab's prefix, with git archive's modes and the commit's time", async () => {
    const res = await download('archive');
    expect(res.status).toBe(200);
    const prefix = `${project.path}-master-${head}`;
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${prefix}.tar.gz"`);
    const out = unpack(res.bytes, 'tar.gz');
    expect(readFileSync(join(out, prefix, 'README.md'), 'utf8')).toBe('# Archive\n');
    expect(readFileSync(join(out, prefix, 'docs/deep/note.txt'), 'utf8')).toBe('deep\n');
    expect(statSync(join(out, prefix, 'bin/run.sh')).mode & 0o111).not.toBe(0);
    const lines = listing(res.bytes, 'tar.gz').trim().split('\n');
    // git's order: a directory, then what it holds; the prefix first.
    expect(lines.map((l) => l.split(/\s+/).at(-1))).toEqual([
      `${prefix}/`,
      `${prefix}/README.md`,
      `${prefix}/bin/`,
      `${prefix}/bin/run.sh`,
      `${prefix}/docs/`,
      `${prefix}/docs/deep/`,
      `${prefix}/docs/deep/note.txt`,
      `${prefix}/docs/guide.md`,
    ]);
    expect(lines[1]).toMatch(/^-rw-rw-r-- root\/root/);
    expect(lines[3]).toMatch(/^-rwxrwxr-x root\/root/);
    expect(lines[2]).toMatch(/^drwxrwxr-x root\/root/);
    const committed = (await api.get(`/projects/${project.id}/repository/commits/${head}`)).body.committed_date;
    expect(statSync(join(out, prefix, 'README.md')).mtime.getTime()).toBe(new Date(committed).getTime());
  });

  it('is a zip (with the SHA as its comment) or a plain tar by extension or format, of a ref or a path', async () => {
    const zip = await download('archive.zip');
    expect(zip.status).toBe(200);
    expect(zip.headers.get('content-type')).toBe('application/zip');
    const prefix = `${project.path}-master-${head}`;
    const out = unpack(zip.bytes, 'zip');
    expect(readFileSync(join(out, prefix, 'docs/guide.md'), 'utf8')).toBe('guide\n');
    expect(statSync(join(out, prefix, 'bin/run.sh')).mode & 0o111).not.toBe(0);
    const zipFile = join(dir, 'c.zip');
    writeFileSync(zipFile, zip.bytes);
    expect(execFileSync('/usr/bin/unzip', ['-z', zipFile], { encoding: 'utf8' })).toContain(head);
    expect((await download('archive?format=zip')).headers.get('content-disposition')).toBe(`attachment; filename="${prefix}.zip"`);
    const plain = await download('archive.tar');
    expect(plain.status, plain.bytes.toString().slice(0, 200)).toBe(200);
    expect(plain.headers.get('content-disposition')).toBe(`attachment; filename="${prefix}.tar"`);
    expect(listing(plain.bytes, 'tar')).toContain(`${prefix}/docs/guide.md`);
    expect(tarCommitId(plain.bytes)).toBe(head);
    expect(tarCommitId(gunzipSync((await download('archive.tar.gz')).bytes))).toBe(head);
    // bzip2, by the bzip2 program as Workhorse makes it, under every name GitLab takes for it.
    for (const path of ['archive.tar.bz2', 'archive.tbz', 'archive.tbz2', 'archive.tb2', 'archive.bz2', 'archive?format=tar.bz2']) {
      const bzip2 = await download(path);
      expect([path, bzip2.status, bzip2.headers.get('content-disposition')]).toEqual([path, 200, `attachment; filename="${prefix}.tar.bz2"`]);
      expect(bzip2.bytes.subarray(0, 3).toString('latin1')).toBe('BZh');
      expect(readFileSync(join(unpack(bzip2.bytes, 'tar.bz2'), prefix, 'docs/deep/note.txt'), 'utf8')).toBe('deep\n');
      expect(tarCommitId(execFileSync('/usr/bin/bzip2', ['-dc'], { input: bzip2.bytes }))).toBe(head);
    }
    // tgz and gz are tar.gz, as is any other format given as a parameter.
    for (const path of ['archive.tgz', 'archive.gz', 'archive?format=rar']) {
      expect((await download(path)).headers.get('content-disposition')).toBe(`attachment; filename="${prefix}.tar.gz"`);
    }
    const branch = await download('archive.tar?sha=feature%2Fx');
    expect(branch.headers.get('content-disposition')).toBe(`attachment; filename="${project.path}-feature-x-${head}.tar"`);
    const docs = await download('archive.tar?path=docs');
    const docsPrefix = `${prefix}-docs`;
    expect(docs.headers.get('content-disposition')).toBe(`attachment; filename="${docsPrefix}.tar"`);
    expect(listing(docs.bytes, 'tar').trim().split('\n').map((l) => l.split(/\s+/).at(-1))).toEqual([
      `${docsPrefix}/`,
      `${docsPrefix}/docs/`,
      `${docsPrefix}/docs/deep/`,
      `${docsPrefix}/docs/deep/note.txt`,
      `${docsPrefix}/docs/guide.md`,
    ]);
  });

  it('answers 404 File for an unknown ref or path and an empty repository', async () => {
    for (const path of ['archive?sha=nope', 'archive.zip?path=nowhere', 'archive.tar.bz2?sha=nope']) {
      const res = await download(path);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.bytes.toString())).toEqual({ message: '404 File Not Found' });
    }
    const empty = await createProject(api);
    expect((await api.get(`/projects/${empty.id}/repository/archive`)).body).toEqual({ message: '404 File Not Found' });
    expect((await api.get(`/projects/${project.id}/repository/archive.rar`)).status).toBe(404);
  });
});

describe('GET /projects/:id/snapshot', () => {
  it('is the bare repository as a tar for administrators, which git clones and fsck passes', async () => {
    const res = await download('../snapshot');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-tar');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="snapshot.tar"');
    const bare = unpack(res.bytes, 'tar');
    expect(readFileSync(join(bare, 'HEAD'), 'utf8')).toBe('ref: refs/heads/master\n');
    const git = (...args: string[]) => execFileSync('/usr/bin/git', args, { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir } });
    git('--git-dir', bare, 'fsck', '--strict', '--no-dangling');
    const clone = join(dir, 'clone');
    git('clone', '--quiet', bare, clone);
    expect(readFileSync(join(clone, 'docs/guide.md'), 'utf8')).toBe('guide\n');
    expect(git('-C', clone, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(git('--git-dir', bare, 'for-each-ref', '--format=%(refname)').trim().split('\n')).toEqual(['refs/heads/feature/x', 'refs/heads/master']);
    const commits = (await api.get(`/projects/${project.id}/repository/commits`)).body.map((c: any) => c.id);
    expect(git('-C', clone, 'log', '--format=%H').trim().split('\n')).toEqual(commits);
  });

  it('answers 404 for the wiki, which forgelog does not keep', async () => {
    expect((await api.get(`/projects/${project.id}/snapshot`, { query: { wiki: true } })).status).toBe(404);
    expect(await api.get('/projects/999999/snapshot')).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });
});

// Whoever may download the code; a private project of others is 404.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET archive':     { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, developer: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200, guest: 200 } },
  'GET archive.zip': { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200 }, public: { anonymous: 200, nonMember: 200 } },
  // authenticated_as_admin! comes before the project.
  'GET snapshot':    { private: { anonymous: 401, nonMember: 403, guest: 403, reporter: 403, maintainer: 403, owner: 403, admin: 200 }, public: { anonymous: 401, nonMember: 403, developer: 403, admin: 200 } },
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  beforeAll(async () => {
    callers = await createCallers(api, { prefix: 'archive' });
    for (const visibility of ['private', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      await api.post(`/projects/${id}/repository/commits`, { branch: 'master', commit_message: 'Base', actions: [{ action: 'create', file_path: 'a.txt', content: 'a' }] });
      projects.set(visibility, id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const path = { 'GET archive': 'repository/archive', 'GET archive.zip': 'repository/archive.zip', 'GET snapshot': 'snapshot' }[endpoint]!;
    return (await api.get(`/projects/${projects.get(visibility)!}/${path}`, { token: callers[caller].token })).status;
  });
});
