import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createGroup, createProject } from '../support/fixtures.js';
import { gitScratch, withToken } from '../support/git.js';
import { permissionMatrix } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Forks (GitLab 12.10 lib/api/projects.rb, Projects::ForkService, UnlinkForkService,
 * ForkProjectsFinder): POST /projects/:id/fork, GET /projects/:id/forks,
 * POST /projects/:id/fork/:forked_from_id, DELETE /projects/:id/fork.
 */

const { git, newDir, remove } = gitScratch('forgelog-forks-');

let api: TestServer;
let callers: Callers;
type Vis = 'private' | 'internal' | 'public';
const sources = {} as Record<Vis, number>;

beforeAll(async () => {
  api = await startTestServer();
  callers = await createCallers(api);
  for (const visibility of ['private', 'internal', 'public'] as const) sources[visibility] = await sourceWithRoles(api, callers, 'projects', visibility);
});
afterAll(async () => {
  await api.close();
  remove();
});

const repo = (projectId: number, rest = '') => `/projects/${projectId}/repository${rest}`;

/** A source with two branches (master the default), a lightweight and an annotated tag. */
async function sourceWithRepository(options: { visibility?: Vis; token?: string; group?: { id: number } } = {}) {
  const project = await createProject(api, { visibility: options.visibility ?? 'public', initialize_with_readme: true, ...options });
  const commit = (branch: string, path: string, extra = {}) =>
    api.post(repo(project.id, '/commits'), { branch, commit_message: `add ${path}`, actions: [{ action: 'create', file_path: path, content: `${path}\n` }], ...extra });
  expect((await commit('master', 'a.txt')).status).toBe(201);
  expect((await commit('feature', 'b.txt', { start_branch: 'master' })).status).toBe(201);
  expect((await api.post(repo(project.id, '/tags'), { tag_name: 'v1', ref: 'master' })).status).toBe(201);
  expect((await api.post(repo(project.id, '/tags'), { tag_name: 'v2', ref: 'feature', message: 'Two' })).status).toBe(201);
  return project;
}

const refsOf = async (projectId: number) => ({
  branches: ((await api.get(repo(projectId, '/branches'))).body as any[]).map((b) => [b.name, b.commit.id]),
  tags: ((await api.get(repo(projectId, '/tags'), { token: api.rootToken })).body as any[]).map((t) => [t.name, t.target, t.message]),
});

describe('the permission matrix', () => {
  type Caller = 'anonymous' | 'nonMember' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'admin';
  const ok = { reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 } as const;
  // GitLab 12.10: authenticate_non_get!, user_project (404 hidden), then ForkService: who may not
  // fork_project (reporter_access, or public_user_access: a signed-in user who sees an internal or
  // public project) gets CreateService's relations-block error, 409 `forked_from_project_id is forbidden`
  // (the `not_found!` before it came with GitLab 13).
  permissionMatrix<Caller, Vis>(
    {
      'POST /projects/:id/fork': {
        private: { anonymous: 401, nonMember: 404, guest: 409, ...ok },
        internal: { anonymous: 401, nonMember: 201, guest: 201, ...ok },
        public: { anonymous: 401, nonMember: 201, guest: 201, ...ok },
      },
    },
    async ({ caller, visibility }) => {
      const token = callers[caller as Role].token;
      const res = await api.post(`/projects/${sources[visibility]}/fork`, {}, { token });
      if (caller === 'guest' && visibility === 'private') expect(res.body).toEqual({ message: { forked_from_project_id: ['is forbidden'] } });
      if (caller === 'nonMember' && visibility === 'private') expect(res.body).toEqual({ message: '404 Project Not Found' });
      if (res.status === 201) {
        // In the caller's namespace, no more visible than the source, a fork of it.
        expect(res.body).toMatchObject({ namespace: { kind: 'user', path: callers[caller as Role].user!.username }, visibility });
        expect(res.body.forked_from_project).toMatchObject({ id: sources[visibility] });
      }
      return res.status;
    },
  );
});

describe('POST /projects/:id/fork', () => {
  it("forks into the caller's namespace: the source's branches, tags and default branch, as events of the fork's ref streams", async () => {
    const source = await sourceWithRepository();
    const user = await api.createUser();
    const res = await api.post(`/projects/${source.id}/fork`, {}, { token: user.token });
    expect(res.status).toBe(201);
    const fork = res.body;
    expect(fork).toMatchObject({
      name: source.name,
      path: source.path,
      path_with_namespace: `${user.user.username}/${source.path}`,
      default_branch: 'master',
      empty_repo: false,
      visibility: 'public',
      forks_count: 0,
      creator_id: user.user.id,
      forked_from_project: { id: source.id, path_with_namespace: source.path_with_namespace, name: source.name },
    });
    // GitLab 12.10 Entities::Project: forked_from_project right after creator_id, before import_status.
    const keys = Object.keys(fork);
    expect(keys.indexOf('forked_from_project')).toBe(keys.indexOf('creator_id') + 1);
    expect(fork.runners_token).toEqual(expect.any(String));
    expect(await refsOf(fork.id)).toEqual(await refsOf(source.id));
    expect((await api.get(`/projects/${source.id}`)).body.forks_count).toBe(1);
    // GitLab (Project#after_import): the fork's default branch is protected as default_branch_protection says (2: full).
    const protectedBranches = (await api.get(`/projects/${fork.id}/protected_branches`, { token: user.token })).body as any[];
    expect(protectedBranches.map((b) => [b.name, b.push_access_levels[0].access_level])).toEqual([['master', 40]]);

    const events = await api.repositoryEvents(fork.id);
    expect(events.map((e) => [e.type, e.data.branch ?? e.data.tag])).toEqual([
      ['BranchCreated', 'master'],
      ['BranchCreated', 'feature'],
      ['TagCreated', 'v1'],
      ['TagCreated', 'v2'],
    ]);
    expect(events.every((e) => e.metadata.actor_id === user.user.id)).toBe(true);
    expect(events[0]!.data).toMatchObject({ project_id: fork.id, commits: [], commit_count: 0 });
    expect((await api.events(`project-${fork.id}`)).map((e) => [e.type, e.type === 'ProjectForkLinked' ? e.data : undefined])).toEqual([
      ['ProjectCreated', undefined],
      ['ProjectForkLinked', { id: fork.id, forked_from_project_id: source.id }],
    ]);
    // GitLab: Projects::ForkService and Project#after_import create no push event for the copied
    // refs (no post-receive runs): the fork's activity is its creation alone.
    const activity = (await api.get(`/projects/${fork.id}/events`, { token: user.token })).body as { action_name: string; push_data?: unknown }[];
    expect(activity.map((e) => [e.action_name, e.push_data])).toEqual([['created', undefined]]);
    expect((await api.get(`/users/${user.user.id}/events`, { token: user.token })).body.filter((e: { project_id: number }) => e.project_id === fork.id).map((e: { action_name: string }) => e.action_name)).toEqual(['created']);
  });

  it('clones with the same refs and a clean fsck --strict; a push to the fork stays out of the source', async () => {
    const source = await sourceWithRepository();
    const user = await api.createUser();
    const fork = (await api.post(`/projects/${source.id}/fork`, {}, { token: user.token })).body;
    const dir = newDir();
    await git(['clone', '-q', withToken(fork.http_url_to_repo, user.token), dir]);
    await git(['fsck', '--strict', '--no-dangling'], dir);
    const sourceRefs = await git(['ls-remote', withToken(`${api.url}/${source.path_with_namespace}.git`, api.rootToken)]);
    expect(await git(['ls-remote', 'origin'], dir)).toBe(sourceRefs);

    writeFileSync(join(dir, 'c.txt'), 'c\n');
    await git(['add', 'c.txt'], dir);
    await git(['commit', '-q', '-m', 'C'], dir);
    await git(['push', '-q', 'origin', 'master', 'master:topic'], dir);
    const pushed = (await git(['rev-parse', 'HEAD'], dir)).trim();
    expect((await api.get(repo(fork.id, '/branches/topic'))).body.commit.id).toBe(pushed);
    expect((await api.get(repo(source.id, '/branches/topic'))).status).toBe(404);
    expect((await api.get(repo(source.id, `/commits/${pushed}`))).status).toBe(404);
    expect(await git(['ls-remote', withToken(`${api.url}/${source.path_with_namespace}.git`, api.rootToken)])).toBe(sourceRefs);
  });

  it('forks an empty repository as an empty one', async () => {
    const source = await createProject(api, { visibility: 'public' });
    const user = await api.createUser();
    const res = await api.post(`/projects/${source.id}/fork`, {}, { token: user.token });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ default_branch: null, empty_repo: true });
    expect(await api.repositoryEvents(res.body.id)).toEqual([]);
  });

  it('takes namespace (id or path), namespace_id, namespace_path, path and name; the visibility is not above the namespace', async () => {
    const source = await sourceWithRepository();
    const user = await api.createUser();
    const group = await createGroup(api, { visibility: 'private' });
    await addMember(api, 'groups', group.id, user.user.id, 40);
    const byId = await api.post(`/projects/${source.id}/fork`, { namespace: group.id }, { token: user.token });
    expect(byId.status).toBe(201);
    expect(byId.body).toMatchObject({ namespace: { id: group.id }, visibility: 'private', path_with_namespace: `${group.full_path}/${source.path}` });
    const named = { path: 'renamed', name: 'Renamed fork' };
    const byPath = await api.post(`/projects/${source.id}/fork`, { namespace: group.full_path.toUpperCase(), ...named }, { token: user.token });
    expect(byPath.status).toBe(201);
    expect(byPath.body).toMatchObject({ path: 'renamed', name: 'Renamed fork', namespace: { id: group.id } });
    const viaId = await api.post(`/projects/${source.id}/fork`, { namespace_id: group.id, path: 'third', name: 'Third' }, { token: user.token });
    const viaPath = await api.post(`/projects/${source.id}/fork`, { namespace_path: group.full_path, path: 'fourth', name: 'Fourth' }, { token: user.token });
    expect([viaId.status, viaPath.status]).toEqual([201, 201]);
    expect((await api.get(`/projects/${source.id}`)).body.forks_count).toBe(4);
  });

  it('answers 404 "Target Namespace Not Found" for a namespace the caller may not create projects in', async () => {
    const source = await sourceWithRepository();
    const user = await api.createUser();
    const other = await api.createUser();
    const group = await createGroup(api, { visibility: 'public' });
    // A reporter may not create projects in the group (project_creation_level: developers and maintainers).
    await addMember(api, 'groups', group.id, user.user.id, 20);
    for (const namespace of [group.id, group.full_path, other.user.username, 999999, 'no/such/namespace']) {
      const res = await api.post(`/projects/${source.id}/fork`, { namespace }, { token: user.token });
      expect([res.status, res.body]).toEqual([404, { message: '404 Target Namespace Not Found' }]);
    }
    expect((await api.get(`/projects/${source.id}`)).body.forks_count).toBe(0);
  });

  it('answers 409 with the validation errors when the namespace holds the name or path already', async () => {
    const source = await sourceWithRepository();
    const user = await api.createUser();
    expect((await api.post(`/projects/${source.id}/fork`, {}, { token: user.token })).status).toBe(201);
    const again = await api.post(`/projects/${source.id}/fork`, {}, { token: user.token });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: { name: ['has already been taken'], path: ['has already been taken'] } });
    expect((await api.get(`/projects/${source.id}`)).body.forks_count).toBe(1);
  });

  it('refuses a project whose repository is disabled (fork_project is prevented): 409', async () => {
    const source = await sourceWithRepository();
    expect((await api.put(`/projects/${source.id}`, { repository_access_level: 'disabled' })).status).toBe(200);
    const user = await api.createUser();
    expect(await api.post(`/projects/${source.id}/fork`, {}, { token: user.token })).toMatchObject({ status: 409, body: { message: { forked_from_project_id: ['is forbidden'] } } });
    expect((await api.get(`/projects/${source.id}`)).body.forks_count).toBe(0);
  });

  it('declares its parameters', async () => {
    const res = await api.post(`/projects/${sources.public}/fork`, { namespace_id: 'x' }, { token: callers.nonMember.token });
    expect([res.status, res.body]).toEqual([400, { error: 'namespace_id is invalid' }]);
  });
});

describe('forked_from_project and forks_count', () => {
  it('shows the source only to a caller who may read it', async () => {
    const source = await sourceWithRepository({ visibility: 'internal' });
    const user = await api.createUser();
    const fork = (await api.post(`/projects/${source.id}/fork`, {}, { token: user.token })).body;
    expect(fork.visibility).toBe('internal');
    expect((await api.put(`/projects/${source.id}`, { visibility: 'private' })).status).toBe(200);
    const seen = await api.get(`/projects/${fork.id}`, { token: user.token });
    expect(seen.status).toBe(200);
    expect(seen.body).not.toHaveProperty('forked_from_project');
    expect((await api.get(`/projects/${fork.id}`)).body.forked_from_project).toMatchObject({ id: source.id });
    // The simple view has no such field.
    expect((await api.get(`/projects/${source.id}/forks?simple=true`)).body[0]).not.toHaveProperty('forked_from_project');
  });

  it("counts the source's forks until a fork is deleted", async () => {
    const source = await sourceWithRepository();
    const [a, b] = [await api.createUser(), await api.createUser()];
    const forkA = (await api.post(`/projects/${source.id}/fork`, {}, { token: a.token })).body;
    await api.post(`/projects/${source.id}/fork`, {}, { token: b.token });
    expect((await api.get(`/projects/${source.id}`)).body.forks_count).toBe(2);
    expect((await api.del(`/projects/${forkA.id}`, { token: a.token })).status).toBe(202);
    await expect.poll(async () => (await api.get(`/projects/${source.id}`)).body.forks_count, { timeout: 10_000 }).toBe(1);
  });
});

describe('GET /projects/:id/forks', () => {
  it('lists the forks the caller may see, with the project list filters', async () => {
    const source = await sourceWithRepository();
    const group = await createGroup(api, { visibility: 'private' });
    const [a, b] = [await api.createUser(), await api.createUser()];
    const publicFork = (await api.post(`/projects/${source.id}/fork`, { path: 'zeta-fork', name: 'Zeta fork' }, { token: a.token })).body;
    const privateFork = (await api.post(`/projects/${source.id}/fork`, { namespace: group.id }, { token: api.rootToken })).body;
    const ids = (res: { body: any[] }) => res.body.map((p) => p.id).sort((x, y) => x - y);
    expect(ids(await api.get(`/projects/${source.id}/forks`))).toEqual([publicFork.id, privateFork.id]);
    const asB = await api.get(`/projects/${source.id}/forks`, { token: b.token });
    expect(ids(asB)).toEqual([publicFork.id]);
    expect(asB.body[0]).toHaveProperty('permissions');
    expect(asB.headers.get('x-total')).toBe('1');
    const anonymous = await api.get(`/projects/${source.id}/forks`, { token: null });
    expect(ids(anonymous)).toEqual([publicFork.id]);
    expect(anonymous.body[0]).not.toHaveProperty('permissions');
    expect(ids(await api.get(`/projects/${source.id}/forks?search=zeta`))).toEqual([publicFork.id]);
    expect(ids(await api.get(`/projects/${source.id}/forks?visibility=private`))).toEqual([privateFork.id]);
    expect(ids(await api.get(`/projects/${source.id}/forks?owned=true`, { token: a.token }))).toEqual([publicFork.id]);
    expect((await api.get(`/projects/${publicFork.id}/forks`)).body).toEqual([]);
  });

  it('answers 404 for a project the caller may not read', async () => {
    expect(await api.get(`/projects/${sources.private}/forks`, { token: callers.nonMember.token })).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });
});

describe('POST /projects/:id/fork/:forked_from_id', () => {
  it('lets administrators mark a project as a fork (201), once (409 "Project already forked")', async () => {
    const source = await createProject(api, { visibility: 'public' });
    const project = await createProject(api, { visibility: 'public' });
    const res = await api.post(`/projects/${project.id}/fork/${source.id}`);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: project.id, forked_from_project: { id: source.id } });
    expect(res.body).not.toHaveProperty('runners_token');
    expect((await api.get(`/projects/${source.id}`)).body.forks_count).toBe(1);
    const again = await api.post(`/projects/${project.id}/fork/${source.id}`);
    expect([again.status, again.body]).toEqual([409, { message: 'Project already forked' }]);
    expect(await api.post(`/projects/${project.id}/fork/999999`)).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    expect(await api.post(`/projects/${source.id}/fork/${encodeURIComponent(project.path_with_namespace)}`)).toMatchObject({ status: 201 });
  });

  // GitLab 12.10: `authorize! :admin_project, user_project` (maintainers and up), then find_project! of the source.
  it('is for who administers the project: 401 anonymous, 404 hidden, 403 below maintainer, 201 for a maintainer', async () => {
    const source = await createProject(api, { visibility: 'public' });
    const project = await createProject(api, { visibility: 'private' });
    const [developer, maintainer, outsider] = [await api.createUser(), await api.createUser(), await api.createUser()];
    await addMember(api, 'projects', project.id, developer.user.id, 30);
    await addMember(api, 'projects', project.id, maintainer.user.id, 40);
    const link = (token: string | null, from: number | string = source.id) => api.post(`/projects/${project.id}/fork/${from}`, {}, { token });
    expect((await link(null)).status).toBe(401);
    expect(await link(outsider.token)).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    expect((await link(developer.token)).status).toBe(403);
    // A source the maintainer may not read is not found.
    expect(await link(maintainer.token, sources.private)).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    const res = await link(maintainer.token);
    expect(res).toMatchObject({ status: 201, body: { id: project.id, forked_from_project: { id: source.id } } });
    expect(res.body).not.toHaveProperty('runners_token');
    expect((await link(maintainer.token)).status).toBe(409);
  });

  it('links nothing when the caller may not fork the source: 201 with null, as GitLab 12.10', async () => {
    const source = await createProject(api, { visibility: 'private' });
    const project = await createProject(api, { visibility: 'private' });
    const maintainer = await api.createUser();
    await addMember(api, 'projects', project.id, maintainer.user.id, 40);
    // A guest of the source reads it (find_project!) but may not fork it (ForkService#allowed_fork?).
    await addMember(api, 'projects', source.id, maintainer.user.id, 10);
    const res = await api.post(`/projects/${project.id}/fork/${source.id}`, {}, { token: maintainer.token });
    expect([res.status, res.text]).toEqual([201, 'null']);
    expect((await api.get(`/projects/${project.id}`)).body).not.toHaveProperty('forked_from_project');
    expect((await api.events(`project-${project.id}`)).map((e) => e.type)).not.toContain('ProjectForkLinked');
  });
});

describe('DELETE /projects/:id/fork', () => {
  type Caller = 'anonymous' | 'nonMember' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'admin';
  const denied = { anonymous: 401, guest: 403, reporter: 403, developer: 403, maintainer: 403 } as const;
  // GitLab: authorize! :remove_fork_project (owner_access), then 204, or 304 when it is no fork.
  permissionMatrix<Caller, Vis>(
    {
      'DELETE /projects/:id/fork': {
        private: { ...denied, nonMember: 404, owner: 304, admin: 304 },
        public: { ...denied, nonMember: 403, owner: 304, admin: 304 },
      },
    },
    async ({ caller, visibility }) => (await api.del(`/projects/${sources[visibility]}/fork`, { token: callers[caller as Role].token })).status,
  );

  it('removes the relation (204), then answers 304; the source counts one fork less', async () => {
    const source = await sourceWithRepository();
    const user = await api.createUser();
    const fork = (await api.post(`/projects/${source.id}/fork`, {}, { token: user.token })).body;
    expect((await api.del(`/projects/${fork.id}/fork`, { token: user.token })).status).toBe(204);
    expect((await api.get(`/projects/${fork.id}`)).body).not.toHaveProperty('forked_from_project');
    expect((await api.get(`/projects/${source.id}`)).body.forks_count).toBe(0);
    expect((await api.get(`/projects/${source.id}/forks`)).body).toEqual([]);
    expect((await api.del(`/projects/${fork.id}/fork`, { token: user.token })).status).toBe(304);
    const unlinked = (await api.events(`project-${fork.id}`)).filter((e) => e.type === 'ProjectForkUnlinked');
    expect(unlinked.map((e) => e.data)).toEqual([{ id: fork.id, forked_from_project_id: source.id }]);
    // The repository stays the fork's own.
    expect((await refsOf(fork.id)).branches).toEqual((await refsOf(source.id)).branches);
  });
});
