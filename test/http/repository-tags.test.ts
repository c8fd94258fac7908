import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { addMember, createProject, settled } from '../support/fixtures.js';
import { gitScratch } from '../support/git.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * GitLab 12's API::Tags (tags, annotated tags, their legacy releases) and API::ProtectedTags
 * (issue 23 §3), with the tag check (Gitlab::Checks::TagCheck) and tag push activity; the
 * tags reach `git clone` (dumb refs) and the snapshot.
 */

const run = promisify(execFile);
const { dir: scratch, env: gitEnv, git, remove } = gitScratch('forgelog-tags-');

let api: TestServer;
let projectId: number;
let first: string;
let second: string;

const repo = (rest: string, id = projectId) => `/projects/${id}/repository${rest}`;
async function commit(id: number, branch: string, path: string) {
  const res = await api.post(repo('/commits', id), { branch, commit_message: `Add ${path}\n\nBody of ${path}`, actions: [{ action: 'create', file_path: path, content: `${path}\n` }] });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  projectId = (await createProject(api)).id;
  first = await commit(projectId, 'master', 'one.txt');
  second = await commit(projectId, 'master', 'two.txt');
});
afterAll(async () => {
  await api.close();
  remove();
});

describe('POST /projects/:id/repository/tags', () => {
  it('creates a lightweight tag at a ref (Entities::Tag: message null, target the commit, no release)', async () => {
    const res = await api.post(repo('/tags'), { tag_name: 'v1.0', ref: 'master' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['name', 'message', 'target', 'commit', 'release', 'protected']);
    expect(res.body).toMatchObject({ name: 'v1.0', message: null, target: second, release: null, protected: false });
    expect(res.body.commit).toMatchObject({ id: second, short_id: second.slice(0, 8), title: 'Add two.txt', message: 'Add two.txt\n\nBody of two.txt' });
    expect(await api.get(repo('/tags/v1.0'))).toMatchObject({ status: 200, body: res.body });
  });

  it('creates an annotated tag (a tag object by the caller, the message stripped) with release notes; refs resolve tags', async () => {
    const res = await api.post(repo('/tags'), { tag_name: 'v0.9', ref: first, message: '  Release 0.9\n\nNotes  ', release_description: 'Amazing release. Wow' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'v0.9', message: 'Release 0.9\n\nNotes', release: { tag_name: 'v0.9', description: 'Amazing release. Wow' }, commit: { id: first } });
    expect(res.body.target).toMatch(/^[0-9a-f]{40}$/);
    expect(res.body.target).not.toBe(first);
    // A tag is a ref like a branch (git's order: the tag first).
    expect((await api.get(repo('/commits/v0.9'))).body.id).toBe(first);
    expect((await api.get(repo('/commits'), { query: { ref_name: 'v0.9' } })).body.map((c: any) => c.id)).toEqual([first]);
    expect((await api.get(repo('/files/one.txt'), { query: { ref: 'v0.9' } })).body.commit_id).toBe(first);
    // A tag of a tag names the commit.
    const again = await api.post(repo('/tags'), { tag_name: 'v0.9-copy', ref: 'v0.9' });
    expect(again.body).toMatchObject({ target: first, commit: { id: first } });
  });

  it("refuses what Tags::CreateService refuses, in GitLab's words, and writes nothing", async () => {
    const before = (await api.get(repo('/tags'))).body.length;
    expect(await api.post(repo('/tags'), { ref: 'master' })).toMatchObject({ status: 400, body: { error: 'tag_name is missing' } });
    expect(await api.post(repo('/tags'), { tag_name: 'x' })).toMatchObject({ status: 400, body: { error: 'ref is missing' } });
    for (const name of ['bad..name', 'with space', '-dash', 'end.lock', 'a:b']) {
      expect(await api.post(repo('/tags'), { tag_name: name, ref: 'master' })).toMatchObject({ status: 400, body: { message: 'Tag name invalid' } });
    }
    expect(await api.post(repo('/tags'), { tag_name: 'v2', ref: 'nope' })).toMatchObject({ status: 400, body: { message: 'Target nope is invalid' } });
    expect(await api.post(repo('/tags'), { tag_name: 'v1.0', ref: 'master' })).toMatchObject({ status: 400, body: { message: 'Tag v1.0 already exists' } });
    expect((await api.get(repo('/tags'))).body.length).toBe(before);
  });
});

describe('GET /projects/:id/repository/tags', () => {
  let id: number;
  beforeAll(async () => {
    id = (await createProject(api)).id;
    const old = await commit(id, 'master', 'a.txt');
    await commit(id, 'master', 'b.txt');
    for (const [name, ref] of [['v1.9', 'master'], ['v1.10', old], ['release-2', 'master'], ['V1.2', old]] as const) {
      expect((await api.post(repo('/tags', id), { tag_name: name, ref })).status).toBe(201);
    }
  });
  const names = async (query: Record<string, string | number> = {}) => (await api.get(repo('/tags', id), { query })).body.map((t: any) => t.name);

  it("orders by name as VersionSorter does, or by the commit's date (default: updated, desc), paginated", async () => {
    expect(await names({ order_by: 'name', sort: 'asc' })).toEqual(['V1.2', 'release-2', 'v1.9', 'v1.10']);
    expect(await names({ order_by: 'name', sort: 'desc' })).toEqual(['v1.10', 'v1.9', 'release-2', 'V1.2']);
    // By the tagged commit's committer date, then (the same second) by name.
    const ascending = (await api.get(repo('/tags', id), { query: { order_by: 'updated', sort: 'asc' } })).body.map((t: any) => [t.commit.committed_date, t.name]);
    const byDateThenName = (a: [string, string], b: [string, string]) => a[0].localeCompare(b[0]) || (a[1] === b[1] ? 0 : ['V1.2', 'release-2', 'v1.9', 'v1.10'].indexOf(a[1]) - ['V1.2', 'release-2', 'v1.9', 'v1.10'].indexOf(b[1]));
    expect(ascending).toEqual([...ascending].sort(byDateThenName));
    expect(await names()).toEqual(ascending.map(([, name]: [string, string]) => name).reverse());
    const page = await api.get(repo('/tags', id), { query: { order_by: 'name', sort: 'asc', per_page: 3, page: 2 } });
    expect(page.body.map((t: any) => t.name)).toEqual(['v1.10']);
    expect(page.headers.get('x-total')).toBe('4');
    expect(await api.get(repo('/tags', id), { query: { order_by: 'size' } })).toMatchObject({ status: 400, body: { error: 'order_by does not have a valid value' } });
  });

  it('searches as TagsFinder: ^prefix, suffix$, anywhere, without case', async () => {
    expect((await names({ search: '^v1', order_by: 'name', sort: 'asc' }))).toEqual(['V1.2', 'v1.9', 'v1.10']);
    expect(await names({ search: '2$', order_by: 'name', sort: 'asc' })).toEqual(['V1.2', 'release-2']);
    expect(await names({ search: 'LEASE' })).toEqual(['release-2']);
  });

  it('answers 404 Tag Not Found for a tag that does not exist', async () => {
    expect(await api.get(repo('/tags/v9', id))).toMatchObject({ status: 404, body: { message: '404 Tag Not Found' } });
  });
});

describe('DELETE /projects/:id/repository/tags/:tag_name and the releases', () => {
  it('deletes a tag with its release; a missing tag is 404; If-Unmodified-Since before the commit is 412', async () => {
    const id = (await createProject(api)).id;
    await commit(id, 'master', 'a.txt');
    await api.post(repo('/tags', id), { tag_name: 'gone', ref: 'master', release_description: 'notes' });
    expect(await api.del(repo('/tags/gone', id), { headers: { 'If-Unmodified-Since': 'Thu, 01 Jan 2015 00:00:00 GMT' } })).toMatchObject({ status: 412 });
    expect((await api.del(repo('/tags/gone', id))).status).toBe(204);
    expect(await api.get(repo('/tags/gone', id))).toMatchObject({ status: 404 });
    expect(await api.del(repo('/tags/gone', id))).toMatchObject({ status: 404, body: { message: '404 Tag Not Found' } });
    // Made again, it has no release: the old one went with the tag.
    expect((await api.post(repo('/tags', id), { tag_name: 'gone', ref: 'master' })).body.release).toBeNull();
  });

  it('adds release notes once (POST, 201; again 409) and replaces them (PUT, 200; none yet 404)', async () => {
    const id = (await createProject(api)).id;
    await commit(id, 'master', 'a.txt');
    await api.post(repo('/tags', id), { tag_name: 'r1', ref: 'master' });
    expect(await api.put(repo('/tags/r1/release', id), { description: 'x' })).toMatchObject({ status: 404, body: { message: 'Release does not exist' } });
    expect(await api.post(repo('/tags/r1/release', id), { description: 'First' })).toMatchObject({ status: 201, body: { tag_name: 'r1', description: 'First' } });
    expect(await api.post(repo('/tags/r1/release', id), { description: 'Again' })).toMatchObject({ status: 409, body: { message: 'Release already exists' } });
    expect(await api.put(repo('/tags/r1/release', id), { description: 'Second' })).toMatchObject({ status: 200, body: { tag_name: 'r1', description: 'Second' } });
    expect((await api.get(repo('/tags/r1', id))).body.release).toEqual({ tag_name: 'r1', description: 'Second' });
    expect(await api.post(repo('/tags/none/release', id), { description: 'x' })).toMatchObject({ status: 404, body: { message: '404 Tag Not Found' } });
    expect(await api.post(repo('/tags/r1/release', id), {})).toMatchObject({ status: 400, body: { error: 'description is missing' } });
  });
});

describe('protected tags and the tag check', () => {
  let id: number;
  let developer: { user: any; token: string };
  let maintainer: { user: any; token: string };
  beforeAll(async () => {
    id = (await createProject(api)).id;
    await commit(id, 'master', 'a.txt');
    developer = await api.createUser();
    maintainer = await api.createUser();
    await addMember(api, 'projects', id, developer.user.id, 30);
    await addMember(api, 'projects', id, maintainer.user.id, 40);
  });

  it('protects a name or wildcard (Entities::ProtectedTag), once; lists, reads and unprotects it', async () => {
    const made = await api.post(`/projects/${id}/protected_tags`, { name: 'v*' });
    expect(made).toMatchObject({ status: 201, body: { name: 'v*', create_access_levels: [{ access_level: 40, access_level_description: 'Maintainers' }] } });
    expect(await api.post(`/projects/${id}/protected_tags`, { name: 'v*' })).toMatchObject({ status: 422, body: { message: ['Name has already been taken'] } });
    expect(await api.post(`/projects/${id}/protected_tags`, { name: 'x', create_access_level: 60 })).toMatchObject({ status: 400, body: { error: 'create_access_level does not have a valid value' } });
    expect((await api.post(`/projects/${id}/protected_tags`, { name: 'dev-*', create_access_level: 30 })).body.create_access_levels).toEqual([{ access_level: 30, access_level_description: 'Developers + Maintainers' }]);
    expect((await api.post(`/projects/${id}/protected_tags`, { name: 'frozen', create_access_level: 0 })).body.create_access_levels[0].access_level_description).toBe('No one');
    expect((await api.get(`/projects/${id}/protected_tags`)).body.map((t: any) => t.name)).toEqual(['v*', 'dev-*', 'frozen']);
    expect(await api.get(`/projects/${id}/protected_tags/${encodeURIComponent('v*')}`)).toMatchObject({ status: 200, body: { name: 'v*' } });
    expect(await api.get(`/projects/${id}/protected_tags/nope`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });

  it('lets only the create levels make a protected tag, and never moves or deletes one', async () => {
    const as = (who: { token: string }) => ({ token: who.token });
    expect(await api.post(repo('/tags', id), { tag_name: 'v1', ref: 'master' }, as(developer))).toMatchObject({ status: 400, body: { message: 'You are not allowed to create this tag as it is protected.' } });
    expect((await api.post(repo('/tags', id), { tag_name: 'v1', ref: 'master' }, as(maintainer))).body.protected).toBe(true);
    expect((await api.post(repo('/tags', id), { tag_name: 'dev-1', ref: 'master' }, as(developer))).status).toBe(201);
    expect((await api.post(repo('/tags', id), { tag_name: 'plain', ref: 'master' }, as(developer))).body.protected).toBe(false);
    // "No one": not even an administrator.
    expect(await api.post(repo('/tags', id), { tag_name: 'frozen', ref: 'master' })).toMatchObject({ status: 400, body: { message: 'You are not allowed to create this tag as it is protected.' } });
    expect(await api.del(repo('/tags/v1', id), as(maintainer))).toMatchObject({ status: 400, body: { message: 'Protected tags cannot be deleted.' } });
    expect((await api.del(repo('/tags/plain', id), as(developer))).status).toBe(204);
    // Unprotected, it goes.
    expect((await api.del(`/projects/${id}/protected_tags/${encodeURIComponent('v*')}`)).status).toBe(204);
    expect((await api.get(repo('/tags/v1', id))).body.protected).toBe(false);
    expect((await api.del(repo('/tags/v1', id), as(maintainer))).status).toBe(204);
  });
});

describe('tags as pushes, to git and in the log', () => {
  it('shows a tag push in the activity (ref_type tag), and its deletion', async () => {
    const id = (await createProject(api)).id;
    const head = await commit(id, 'master', 'a.txt');
    const tag = (await api.post(repo('/tags', id), { tag_name: 'v3', ref: 'master', message: 'Three' })).body;
    await api.del(repo('/tags/v3', id));
    const events = (await api.get(`/projects/${id}/events`, { query: { action: 'pushed' } })).body;
    const tags = events.filter((e: any) => e.push_data.ref_type === 'tag');
    expect(tags.map((e: any) => [e.action_name, e.push_data])).toEqual([
      ['deleted', { commit_count: 0, action: 'removed', ref_type: 'tag', commit_from: tag.target, commit_to: null, ref: 'v3', commit_title: null, ref_count: null }],
      ['pushed new', { commit_count: 1, action: 'created', ref_type: 'tag', commit_from: null, commit_to: tag.target, ref: 'v3', commit_title: 'Add a.txt', ref_count: null }],
    ]);
    expect(tag.commit.id).toBe(head);
  });

  it('clones with its tags over either protocol (both advertise annotated tags peeled); the tag object is what git writes; the snapshot has them', async () => {
    const id = (await createProject(api, { visibility: 'public' })).id;
    const head = await commit(id, 'master', 'a.txt');
    const annotated = (await api.post(repo('/tags', id), { tag_name: 'v1', ref: 'master', message: 'Version one' })).body;
    await api.post(repo('/tags', id), { tag_name: 'light', ref: 'master' });
    const project = (await api.get(`/projects/${id}`)).body;
    for (const smart of ['1', '0']) {
      const dir = join(scratch, `clone-${id}-${smart}`);
      await run('/usr/bin/git', ['clone', '-q', project.http_url_to_repo, dir], { cwd: scratch, env: { ...gitEnv, GIT_SMART_HTTP: smart } });
      expect((await git(['tag', '--list'], dir)).split('\n').filter(Boolean)).toEqual(['light', 'v1']);
      expect((await git(['rev-parse', 'v1', 'v1^{commit}', 'light'], dir)).trim().split('\n')).toEqual([annotated.target, head, head]);
      const object = await git(['cat-file', '-p', 'v1'], dir);
      expect(object).toMatch(new RegExp(`^object ${head}\ntype commit\ntag v1\ntagger Administrator <[^>]+> \\d+ \\+0000\n\nVersion one$`));
      await git(['fsck', '--strict'], dir);
    }
    const snapshot = await fetch(`${api.url}/api/v4/projects/${id}/snapshot`, { headers: { 'PRIVATE-TOKEN': api.rootToken } });
    expect(snapshot.status).toBe(200);
    const bare = join(scratch, `snapshot-${id}`);
    mkdirSync(bare);
    const tarFile = join(scratch, `snapshot-${id}.tar`);
    writeFileSync(tarFile, Buffer.from(await snapshot.arrayBuffer()));
    await run('/bin/tar', ['-xf', tarFile, '-C', bare]);
    expect((await git(['--git-dir', bare, 'rev-parse', 'v1', 'light'])).trim().split('\n')).toEqual([annotated.target, head]);
    await git(['--git-dir', bare, 'fsck', '--strict']);
  });
});

// Tags are read by who may download the code; written by developers and up (admin_tag);
// protected tags by maintainers. A private project of others is 404.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET tags':           { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, developer: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200, guest: 200 } },
  'GET tag':            { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200 } },
  'POST tag':           { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 201, maintainer: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 201 } },
  'DELETE tag':         { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 204, admin: 204 }, public: { nonMember: 403, reporter: 403, maintainer: 204 } },
  'POST release':       { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 201 }, public: { nonMember: 403, developer: 201 } },
  'GET protected_tags': { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 403, nonMember: 403, developer: 403, maintainer: 200 } },
  'POST protected_tag': { private: { anonymous: 404, nonMember: 404, developer: 403, maintainer: 201, admin: 201 }, public: { anonymous: 403, nonMember: 403, developer: 403, maintainer: 201 } },
};

describe('permissions', () => {
  let callers: Callers;
  const sources = new Map<Visibility, number>();
  beforeAll(async () => {
    callers = await createCallers(api, { prefix: 'tags' });
    for (const visibility of ['private', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      await commit(id, 'master', 'a.txt');
      await api.post(repo('/tags', id), { tag_name: 'base', ref: 'master' });
      sources.set(visibility, id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const id = sources.get(visibility)!;
    const token = callers[caller].token;
    const mine = `${caller}-${visibility}`;
    switch (endpoint) {
      case 'GET tags':
        return (await api.get(repo('/tags', id), { token })).status;
      case 'GET tag':
        return (await api.get(repo('/tags/base', id), { token })).status;
      case 'POST tag':
        return (await api.post(repo('/tags', id), { tag_name: mine, ref: 'master' }, { token })).status;
      case 'DELETE tag':
        await api.post(repo('/tags', id), { tag_name: `del-${mine}`, ref: 'master' });
        return (await api.del(repo(`/tags/del-${mine}`, id), { token })).status;
      case 'POST release':
        await api.post(repo('/tags', id), { tag_name: `rel-${mine}`, ref: 'master' });
        return (await api.post(repo(`/tags/rel-${mine}/release`, id), { description: 'notes' }, { token })).status;
      case 'GET protected_tags':
        return (await api.get(`/projects/${id}/protected_tags`, { token })).status;
      case 'POST protected_tag':
        return (await api.post(`/projects/${id}/protected_tags`, { name: `p-${mine}` }, { token })).status;
      default:
        throw new Error(endpoint);
    }
  });
});
