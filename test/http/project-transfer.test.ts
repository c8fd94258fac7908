import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createGroup, createProject } from '../support/fixtures.js';
import { gitScratch, withToken } from '../support/git.js';
import { permissionMatrix } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * PUT /projects/:id/transfer (GitLab 12.10 lib/api/projects.rb, Projects::TransferService):
 * owners move a project to a namespace they may create projects in; its full path, its
 * repository's URLs and who may reach it follow.
 */

const { git, newDir, remove } = gitScratch('forgelog-transfer-');

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

const failed = (message: string) => ({ message: `Failed to transfer project {:new_namespace=>["${message}"]}` });

describe('the permission matrix', () => {
  type Caller = 'anonymous' | 'nonMember' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'admin';
  const denied = { anonymous: 401, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 200, admin: 200 } as const;
  // GitLab: authenticate_non_get!, user_project (404 hidden), authorize! :change_namespace (owner_access).
  permissionMatrix<Caller, Vis>(
    {
      'PUT /projects/:id/transfer': {
        private: { ...denied, nonMember: 404 },
        internal: { ...denied, nonMember: 403 },
        public: { ...denied, nonMember: 403 },
      },
    },
    async ({ caller, visibility, status }) => {
      const who = callers[caller as Role];
      // Each transfer that succeeds moves a project of its own into the caller's namespace.
      const projectId = status === 200 ? await sourceWithRoles(api, callers, 'projects', visibility) : sources[visibility];
      const res = await api.put(`/projects/${projectId}/transfer`, { namespace: who.user?.username ?? 'root' }, { token: who.token });
      if (res.status === 200) expect(res.body).toMatchObject({ id: projectId, namespace: { kind: 'user', path: who.user!.username } });
      else expect((await api.get(`/projects/${projectId}`)).body.namespace.kind).toBe('group');
      return res.status;
    },
  );
});

describe('PUT /projects/:id/transfer', () => {
  it('moves the project: its paths, its repository URL, who reaches it, and an audit event', async () => {
    const from = await createGroup(api, { visibility: 'private' });
    const to = await createGroup(api, { visibility: 'private' });
    const [oldMember, newMember] = [await api.createUser(), await api.createUser()];
    await addMember(api, 'groups', from.id, oldMember.user.id, 30);
    await addMember(api, 'groups', to.id, newMember.user.id, 30);
    const project = await createProject(api, { group: from, visibility: 'private', initialize_with_readme: true });
    expect((await api.get(`/projects/${project.id}`, { token: newMember.token })).status).toBe(404);

    const res = await api.put(`/projects/${project.id}/transfer`, { namespace: to.full_path });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: project.id,
      path_with_namespace: `${to.full_path}/${project.path}`,
      name_with_namespace: `${to.name} / ${project.name}`,
      namespace: { id: to.id, kind: 'group', full_path: to.full_path },
      http_url_to_repo: `${api.url}/${to.full_path}/${project.path}.git`,
      web_url: `${api.url}/${to.full_path}/${project.path}`,
    });
    expect(res.body).not.toHaveProperty('runners_token');
    // The old group's members lose it, the new group's get it.
    expect((await api.get(`/projects/${project.id}`, { token: oldMember.token })).status).toBe(404);
    expect((await api.get(`/projects/${project.id}`, { token: newMember.token })).status).toBe(200);
    expect((await api.get(`/projects/${encodeURIComponent(`${to.full_path}/${project.path}`)}`)).body.id).toBe(project.id);
    expect((await api.get(`/projects/${encodeURIComponent(project.path_with_namespace)}`)).status).toBe(404);

    // git follows the new path.
    const dir = newDir();
    await git(['clone', '-q', withToken(res.body.http_url_to_repo, newMember.token), dir]);
    expect((await git(['log', '--format=%s'], dir)).trim()).toBe('Initial commit');
    expect((await git(['ls-remote', withToken(`${api.url}/${project.path_with_namespace}.git`, api.rootToken)]).catch((e: Error) => e.message))).toMatch(/not found|could not be found|403|404/i);

    const transferred = (await api.events(`project-${project.id}`)).filter((e) => e.type === 'ProjectTransferred');
    expect(transferred.map((e) => e.data)).toEqual([
      {
        id: project.id,
        namespace_id: to.id,
        previous_namespace_id: from.id,
        traversal_ids: [to.id],
        path_with_namespace: `${to.full_path}/${project.path}`,
        name_with_namespace: `${to.name} / ${project.name}`,
        visibility: null,
        previous_path_with_namespace: project.path_with_namespace,
      },
    ]);
    // GitLab 12.10 has no project audit events API: the instance's, filtered to the project.
    const audit = await api.get(`/audit_events?entity_type=Project&entity_id=${project.id}`);
    expect(audit.status).toBe(200);
    expect(audit.body[0]).toMatchObject({
      entity_id: project.id,
      entity_type: 'Project',
      details: { change: 'namespace', from: project.path_with_namespace, to: `${to.full_path}/${project.path}`, target_details: `${to.full_path}/${project.path}` },
    });
  });

  it("moves a personal project into a group: its owner stays a maintainer member, the namespaces' project counts follow", async () => {
    const owner = await api.createUser({ projects_limit: 1 });
    const group = await createGroup(api, { token: owner.token, visibility: 'public' });
    const project = await createProject(api, { token: owner.token, visibility: 'public' });
    expect((await api.post('/projects', { name: 'second', path: 'second' }, { token: owner.token })).status).toBe(403);
    const res = await api.put(`/projects/${project.id}/transfer`, { namespace: group.id }, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ namespace: { id: group.id, kind: 'group' }, visibility: 'public' });
    expect(res.body).not.toHaveProperty('owner');
    const members = (await api.get(`/projects/${project.id}/members`)).body as any[];
    expect(members.map((m) => [m.id, m.access_level])).toEqual([[owner.user.id, 40]]);
    // The personal project limit counts the personal namespace's projects: one left again.
    expect((await api.post('/projects', { name: 'second', path: 'second' }, { token: owner.token })).status).toBe(201);
  });

  it("lowers the visibility to a private group's", async () => {
    const to = await createGroup(api, { visibility: 'private' });
    const project = await createProject(api, { visibility: 'public' });
    const res = await api.put(`/projects/${project.id}/transfer`, { namespace: to.id });
    expect(res.status).toBe(200);
    expect(res.body.visibility).toBe('private');
    expect((await api.get(`/projects/${project.id}`, { token: callers.nonMember.token })).status).toBe(404);
  });

  it('refuses a namespace the caller may not create projects in, and the same namespace: 400', async () => {
    const owner = await api.createUser();
    const project = await createProject(api, { token: owner.token, visibility: 'public' });
    const group = await createGroup(api, { visibility: 'public' });
    await addMember(api, 'groups', group.id, owner.user.id, 20);
    for (const namespace of [group.id, owner.user.username]) {
      expect(await api.put(`/projects/${project.id}/transfer`, { namespace }, { token: owner.token })).toMatchObject({
        status: 400,
        body: failed('Transfer failed, please contact an admin.'),
      });
    }
    expect((await api.get(`/projects/${project.id}`)).body.namespace.path).toBe(owner.user.username);
  });

  it('answers 404 "Namespace Not Found" for a namespace that does not exist or the caller may not read', async () => {
    const owner = await api.createUser();
    const other = await api.createUser();
    const project = await createProject(api, { token: owner.token });
    const hidden = await createGroup(api, { visibility: 'private' });
    for (const namespace of [hidden.id, hidden.full_path, other.user.username, 999999, 'no/such']) {
      expect(await api.put(`/projects/${project.id}/transfer`, { namespace }, { token: owner.token })).toMatchObject({ status: 404, body: { message: '404 Namespace Not Found' } });
    }
    expect(await api.put(`/projects/${project.id}/transfer`, {}, { token: owner.token })).toMatchObject({ status: 400, body: { error: 'namespace is missing' } });
  });

  it('refuses a namespace holding a project of the same path or name', async () => {
    const to = await createGroup(api);
    const project = await createProject(api, { path: 'clash-path', name: 'Clash' });
    await createProject(api, { group: to, path: 'clash-path', name: 'Another' });
    expect(await api.put(`/projects/${project.id}/transfer`, { namespace: to.id })).toMatchObject({
      status: 400,
      body: failed('Project with same name or path in target namespace already exists'),
    });
    const named = await createProject(api, { path: 'other-path', name: 'Another' });
    expect((await api.put(`/projects/${named.id}/transfer`, { namespace: to.id })).status).toBe(400);
    // Once moved away, its name and path are free in the old namespace.
    const free = await createProject(api, { path: 'free-path', name: 'Free' });
    expect((await api.put(`/projects/${free.id}/transfer`, { namespace: to.id })).status).toBe(200);
    expect((await createProject(api, { path: 'free-path', name: 'Free' })).path).toBe('free-path');
  });
});
