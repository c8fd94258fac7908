import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { createProject, settled } from '../support/fixtures.js';
import { gitScratch, withToken } from '../support/git.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, withScopes, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The real git (2.39) cloning over forgelog's dumb HTTP: GIT_SMART_HTTP=0 makes git ask for
 * `info/refs` without `?service=` (the smart protocol is test/http/git-smart-http.test.ts).
 */
// The dumb protocol: git asked not to use the smart one.
const { dir: scratch, git, remove } = gitScratch('forgelog-clone-', { GIT_SMART_HTTP: '0' });
let clones = 0;

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(async () => {
  await api.close();
  remove();
});

const repo = (projectId: number, rest = '') => `/projects/${projectId}/repository${rest}`;
async function commitTo(projectId: number, body: Record<string, unknown>) {
  const res = await api.post(repo(projectId, '/commits'), body);
  if (res.status !== 201) throw new Error(`commit: ${res.status} ${res.text}`);
  return res.body as { id: string };
}
const create = (path: string, content: string, more: Record<string, unknown> = {}) => ({ action: 'create', file_path: path, content, ...more });

/** The URL with a token as the password (any username, as GitLab accepts). */
const raw = (url: string, init: RequestInit = {}) => fetch(url, init);

async function cloneOf(url: string): Promise<string> {
  const dir = join(scratch, `clone-${++clones}`);
  await git(['clone', '-q', url, dir]);
  return dir;
}

describe('git clone over dumb HTTP', () => {
  let project: { id: number; http_url_to_repo: string; path_with_namespace: string };
  let head: { id: string };
  beforeAll(async () => {
    project = (await api.post('/projects', { name: 'Clone Me', visibility: 'public', initialize_with_readme: true })).body;
    await commitTo(project.id, {
      branch: 'master',
      commit_message: 'Add tools\n\nwith a body',
      actions: [create('bin/run', '#!/bin/sh\necho hi\n', { execute_filemode: true }), create('docs/guide.md', '# Guide\n'), create('logo.bin', Buffer.from([0, 1, 2, 255]).toString('base64'), { encoding: 'base64' })],
    });
    await api.post(repo(project.id, '/commits'), { branch: 'master', commit_message: 'chmod', actions: [{ action: 'chmod', file_path: 'bin/run', execute_filemode: true }] });
    await commitTo(project.id, { branch: 'feature', start_branch: 'master', commit_message: 'Feature', actions: [create('feature.txt', 'f\n')] });
    head = await commitTo(project.id, { branch: 'master', commit_message: 'Move the guide', actions: [{ action: 'move', file_path: 'guide.md', previous_path: 'docs/guide.md' }] });
  });

  it('clones a public project anonymously: fsck --strict passes, the history and files are the API\'s', async () => {
    expect(project.http_url_to_repo).toBe(`${api.url}/${project.path_with_namespace}.git`);
    const dir = await cloneOf(project.http_url_to_repo);
    await git(['fsck', '--strict', '--no-dangling'], dir);
    const log = (await git(['log', '--format=%H'], dir)).trim().split('\n');
    expect(log[0]).toBe(head.id);
    expect(log).toEqual((await api.get(repo(project.id, '/commits'))).body.map((c: { id: string }) => c.id));
    const featureLog = (await git(['log', '--format=%H', 'origin/feature'], dir)).trim().split('\n');
    expect(featureLog).toEqual((await api.get(repo(project.id, '/commits'), { query: { ref_name: 'feature' } })).body.map((c: { id: string }) => c.id));
    expect((await git(['branch', '-r'], dir)).split('\n').map((s) => s.trim()).filter(Boolean)).toEqual(['origin/HEAD -> origin/master', 'origin/feature', 'origin/master']);
    expect(readFileSync(join(dir, 'guide.md'), 'utf8')).toBe('# Guide\n');
    expect([...readFileSync(join(dir, 'logo.bin'))]).toEqual([0, 1, 2, 255]);
    expect(await git(['ls-files', '-s', 'bin/run'], dir)).toMatch(/^100755 /);
  });

  it('serves http_url_to_repo under an external URL with a path of its own', async () => {
    const config = api.runtime.config as { externalUrl: string };
    const own = config.externalUrl;
    config.externalUrl = `${api.url}/gitlab`;
    try {
      const url = (await api.get(`/projects/${project.id}`)).body.http_url_to_repo;
      expect(url).toBe(`${api.url}/gitlab/${project.path_with_namespace}.git`);
      const dir = await cloneOf(url);
      expect((await git(['rev-parse', 'HEAD'], dir)).trim()).toBe(head.id);
    } finally {
      config.externalUrl = own;
    }
  });

  it('finds the project by its path case-insensitively', async () => {
    const dir = await cloneOf(`${api.url}/${project.path_with_namespace.toUpperCase()}.git`);
    expect((await git(['rev-parse', 'HEAD'], dir)).trim()).toBe(head.id);
  });

  it('serves the dumb protocol: info/refs, HEAD, empty packs, loose objects', async () => {
    const base = project.http_url_to_repo;
    const branches = (await api.get(repo(project.id, '/branches'))).body as { name: string; commit: { id: string } }[];
    const expected = branches.map((b) => `${b.commit.id}\trefs/heads/${b.name}\n`).join('');
    const res = await raw(`${base}/info/refs`);
    expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([200, 'text/plain; charset=utf-8', expected]);
    const headRes = await raw(`${base}/HEAD`);
    expect([headRes.status, await headRes.text()]).toEqual([200, 'ref: refs/heads/master\n']);
    const packs = await raw(`${base}/objects/info/packs`);
    expect([packs.status, await packs.text()]).toEqual([200, '']);
    const object = await raw(`${base}/objects/${head.id.slice(0, 2)}/${head.id.slice(2)}`);
    expect([object.status, object.headers.get('content-type')]).toEqual([200, 'application/x-git-loose-object']);
    expect(inflateSync(Buffer.from(await object.arrayBuffer())).toString()).toMatch(/^commit \d+\0tree [0-9a-f]{40}\n/);
    const missing = await raw(`${base}/objects/00/${'0'.repeat(38)}`);
    expect(missing.status).toBe(404);
  });

  it("never serves another project's objects", async () => {
    const other = await createProject(api, { visibility: 'public' });
    const res = await raw(`${api.url}/${other.path_with_namespace}.git/objects/${head.id.slice(0, 2)}/${head.id.slice(2)}`);
    expect(res.status).toBe(404);
  });

  it('clones an empty repository as git does (no refs)', async () => {
    const empty = await createProject(api, { visibility: 'public' });
    const url = `${api.url}/${empty.path_with_namespace}.git`;
    const res = await raw(`${url}/info/refs`);
    expect([res.status, await res.text()]).toEqual([200, '']);
    const dir = await cloneOf(url);
    expect((await git(['branch', '-a'], dir)).trim()).toBe('');
  });
});

describe('private and internal projects', () => {
  let callers: Callers;
  const projects = new Map<Visibility, { id: number; url: string; head: string }>();
  beforeAll(async () => {
    callers = await createCallers(api, { prefix: 'githttp' });
    for (const visibility of ['private', 'internal', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      const made = await commitTo(id, { branch: 'master', commit_message: 'Base', actions: [create('README.md', '# Hi\n')] });
      projects.set(visibility, { id, url: (await api.get(`/projects/${id}`)).body.http_url_to_repo, head: made.id });
    }
  });

  it('clones a private project with a personal access token as the password, and asks anonymous callers to sign in', async () => {
    const { url, head } = projects.get('private')!;
    const dir = await cloneOf(withToken(url, callers.reporter.token!));
    await git(['fsck', '--strict', '--no-dangling'], dir);
    expect((await git(['rev-parse', 'HEAD'], dir)).trim()).toBe(head);
    await expect(cloneOf(url)).rejects.toThrow(/Authentication failed|could not read Username/);
    const anonymous = await raw(`${url}/info/refs`);
    expect([anonymous.status, anonymous.headers.get('www-authenticate'), await anonymous.text()]).toEqual([401, 'Basic realm="GitLab"', 'HTTP Basic: Access denied\n']);
  });

  it('answers a signed-in caller who may not see it 404, one who may not download 403, a bad token 401', async () => {
    const { url } = projects.get('private')!;
    const as = (token: string) => raw(`${url}/info/refs`, { headers: { authorization: `Basic ${Buffer.from(`u:${token}`).toString('base64')}` } });
    const nonMember = await as(callers.nonMember.token!);
    expect([nonMember.status, await nonMember.text()]).toEqual([404, 'The project you were looking for could not be found.']);
    const guest = await as(callers.guest.token!);
    expect([guest.status, await guest.text()]).toEqual([403, 'You are not allowed to download code from this project.']);
    const bad = await as('not-a-token');
    expect([bad.status, bad.headers.get('www-authenticate')]).toEqual([401, 'Basic realm="GitLab"']);
    const readUser = await as((await withScopes(api, callers.reporter, ['read_user'])).token!);
    expect(readUser.status).toBe(403);
    const readRepository = await as((await withScopes(api, callers.reporter, ['read_repository'])).token!);
    expect(readRepository.status).toBe(200);
    const missing = await raw(`${api.url}/no-such/project.git/info/refs`);
    expect(missing.status).toBe(401);
  });

  // prettier-ignore
  const MATRIX: MatrixTable<Role, Visibility> = {
    'GET info/refs': {
      private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200, blocked: 403, external: 404 },
      internal: { anonymous: 401, nonMember: 200, guest: 200, reporter: 200, admin: 200, blocked: 403, external: 404 },
      public: { anonymous: 200, nonMember: 200, guest: 200, reporter: 200, external: 200, blocked: 403 },
    },
    'GET objects': {
      private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 200, admin: 200 },
      internal: { anonymous: 401, nonMember: 200, external: 404 },
      public: { anonymous: 200, nonMember: 200 },
    },
  };

  describe('permissions', () => {
    permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
      const { url, head } = projects.get(visibility)!;
      const path = endpoint === 'GET info/refs' ? '/info/refs' : `/objects/${head.slice(0, 2)}/${head.slice(2)}`;
      const token = callers[caller].token;
      const res = await raw(`${url}${path}`, token === null ? {} : { headers: { authorization: `Basic ${Buffer.from(`${caller}:${token}`).toString('base64')}` } });
      if (res.status === 401) expect(res.headers.get('www-authenticate')).toBe('Basic realm="GitLab"');
      return res.status;
    });
  });
});
