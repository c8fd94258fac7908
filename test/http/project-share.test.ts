import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createGroup, createProject } from '../support/fixtures.js';
import { permissionMatrix } from '../support/matrix.js';
import { clientScript, pythonGitlabAvailable, runPython, warnIfUnavailable } from '../support/python-gitlab.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * POST /projects/:id/share and DELETE /projects/:id/share/:group_id (GitLab 12.10
 * lib/api/projects.rb, Projects::GroupLinks::CreateService, ProjectGroupLink): the link is
 * an event of the project's stream; shared_with_groups and the shared group's members'
 * access come from it.
 */

let api: TestServer;
let callers: Callers;
const projects = {} as Record<'private' | 'public', number>;

beforeAll(async () => {
  api = await startTestServer();
  callers = await createCallers(api);
  projects.private = await sourceWithRoles(api, callers, 'projects', 'private');
  projects.public = await sourceWithRoles(api, callers, 'projects', 'public');
});
afterAll(() => api.close());

const shared = async (projectId: number) => (await api.get(`/projects/${projectId}`)).body.shared_with_groups;

describe('the permission matrix', () => {
  type Caller = 'anonymous' | 'nonMember' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'admin';
  const denied = { anonymous: 401, guest: 403, reporter: 403, developer: 403, maintainer: 0, owner: 0, admin: 0 } as const;
  // GitLab: authenticate_non_get!, then user_project (404 hidden), then authorize! :admin_project.
  const post = (ok: number) => ({
    private: { ...denied, nonMember: 404, maintainer: ok, owner: ok, admin: ok },
    public: { ...denied, nonMember: 403, maintainer: ok, owner: ok, admin: ok },
  });
  permissionMatrix<Caller, 'private' | 'public'>(
    { 'POST /projects/:id/share': post(201), 'DELETE /projects/:id/share/:group_id': post(204) },
    async ({ endpoint, caller, visibility }) => {
      const projectId = projects[visibility];
      const group = await createGroup(api, { visibility: 'public' });
      const token = callers[caller as Role].token;
      if (endpoint.startsWith('POST')) {
        const res = await api.post(`/projects/${projectId}/share`, { group_id: group.id, group_access: 30 }, { token });
        const link = (await shared(projectId)).find((s: any) => s.group_id === group.id);
        expect(link !== undefined).toBe(res.status === 201);
        return res.status;
      }
      expect((await api.post(`/projects/${projectId}/share`, { group_id: group.id, group_access: 30 })).status).toBe(201);
      const res = await api.del(`/projects/${projectId}/share/${group.id}`, { token });
      const link = (await shared(projectId)).find((s: any) => s.group_id === group.id);
      expect(link === undefined).toBe(res.status === 204);
      return res.status;
    },
  );
});

describe('POST /projects/:id/share', () => {
  it('links the group (201 with the link), shows it in shared_with_groups and gives its members access capped by group_access', async () => {
    const project = await createProject(api, { visibility: 'private' });
    const group = await createGroup(api, { visibility: 'private' });
    const member = await api.createUser();
    await addMember(api, 'groups', group.id, member.user.id, 30);
    expect((await api.get(`/projects/${project.id}`, { token: member.token })).status).toBe(404);

    const res = await api.post(`/projects/${project.id}/share`, { group_id: group.id, group_access: 20, expires_at: '2999-12-31' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(Number), project_id: project.id, group_id: group.id, group_access: 20, expires_at: '2999-12-31' });
    expect(await shared(project.id)).toEqual([
      { group_id: group.id, group_name: group.name, group_full_path: group.full_path, group_access_level: 20, expires_at: '2999-12-31' },
    ]);

    // A developer of the group is a reporter of the project: it reads it, it may not create an environment.
    expect((await api.get(`/projects/${project.id}`, { token: member.token })).status).toBe(200);
    expect((await api.post(`/projects/${project.id}/environments`, { name: 'review' }, { token: member.token })).status).toBe(403);

    expect((await api.del(`/projects/${project.id}/share/${group.id}`)).status).toBe(204);
    expect(await shared(project.id)).toEqual([]);
    expect((await api.get(`/projects/${project.id}`, { token: member.token })).status).toBe(404);
    const links = (await api.events(`project-${project.id}`)).filter((e) => e.type.startsWith('ProjectGroupLink'));
    expect(links.map((e) => [e.type, e.data])).toEqual([
      ['ProjectGroupLinkCreated', { id: project.id, link_id: res.body.id, group_id: group.id, group_access: 20, expires_at: '2999-12-31', path_with_namespace: project.path_with_namespace }],
      ['ProjectGroupLinkDeleted', { id: project.id, link_id: res.body.id, group_id: group.id, path_with_namespace: project.path_with_namespace }],
    ]);
  });

  it('gives each link an id of its own', async () => {
    const project = await createProject(api);
    const [a, b] = [await createGroup(api), await createGroup(api)];
    const first = await api.post(`/projects/${project.id}/share`, { group_id: a.id, group_access: 10 });
    const second = await api.post(`/projects/${project.id}/share`, { group_id: b.id, group_access: 40 });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.id).not.toBe(first.body.id);
    expect(first.body.expires_at).toBeNull();
  });

  it('declares group_id and group_access (Gitlab::Access.values: no owner)', async () => {
    const project = await createProject(api);
    const group = await createGroup(api);
    expect(await api.post(`/projects/${project.id}/share`, {})).toMatchObject({ status: 400, body: { error: 'group_id is missing, group_access is missing' } });
    expect(await api.post(`/projects/${project.id}/share`, { group_id: group.id, group_access: 50 })).toMatchObject({
      status: 400,
      body: { error: 'group_access does not have a valid value' },
    });
    expect(await api.post(`/projects/${project.id}/share`, { group_id: 'x', group_access: 30, expires_at: 'soon' })).toMatchObject({
      status: 400,
      body: { error: 'group_id is invalid, expires_at is invalid' },
    });
    expect(await shared(project.id)).toEqual([]);
  });

  it('answers 404 "Not Found" for a group that does not exist or that the caller may not read', async () => {
    const maintainer = callers.maintainer.token;
    const hidden = await createGroup(api, { visibility: 'private' });
    for (const groupId of [hidden.id, 999999]) {
      const res = await api.post(`/projects/${projects.private}/share`, { group_id: groupId, group_access: 30 }, { token: maintainer });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Not Found' });
    }
    expect((await shared(projects.private)).some((s: any) => s.group_id === hidden.id)).toBe(false);
  });

  it('answers 409 with the model’s message for a group already shared, and for the project’s group or its ancestors', async () => {
    const parent = await createGroup(api);
    const child = await createGroup(api, { parent });
    const project = await createProject(api, { group: child });
    const other = await createGroup(api);
    expect((await api.post(`/projects/${project.id}/share`, { group_id: other.id, group_access: 30 })).status).toBe(201);
    expect(await api.post(`/projects/${project.id}/share`, { group_id: other.id, group_access: 20 })).toMatchObject({
      status: 409,
      body: { message: 'Group already shared with this group' },
    });
    for (const group of [child, parent]) {
      expect(await api.post(`/projects/${project.id}/share`, { group_id: group.id, group_access: 30 })).toMatchObject({
        status: 409,
        body: { message: 'Project cannot be shared with the group it is in or one of its ancestors.' },
      });
    }
    expect((await shared(project.id)).map((s: any) => [s.group_id, s.group_access_level])).toEqual([[other.id, 30]]);
  });

  it('answers 400 when the project’s namespace locks sharing (share_with_group_lock)', async () => {
    const locked = (await api.post('/groups', { name: 'Locked', path: `locked-${process.pid}`, share_with_group_lock: true })).body;
    const project = await createProject(api, { group: locked });
    const other = await createGroup(api);
    const res = await api.post(`/projects/${project.id}/share`, { group_id: other.id, group_access: 30 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'The project sharing with group is disabled' });
    expect(await shared(project.id)).toEqual([]);
  });
});

describe('the audit', () => {
  it('records the share and its removal on the shared group, the project as target (EE::Projects::GroupLinks::*Service)', async () => {
    const project = await createProject(api);
    const group = await createGroup(api);
    expect((await api.post(`/projects/${project.id}/share`, { group_id: group.id, group_access: 30 })).status).toBe(201);
    expect((await api.del(`/projects/${project.id}/share/${group.id}`)).status).toBe(204);
    const res = await api.get(`/groups/${group.id}/audit_events`);
    expect(res.status).toBe(200);
    const target = { target_id: project.id, target_type: 'Project', target_details: project.path_with_namespace, entity_path: group.full_path };
    expect(res.body.filter((r: any) => r.details.target_type === 'Project').map((r: any) => [r.entity_type, r.entity_id, r.details])).toEqual([
      ['Group', group.id, expect.objectContaining({ remove: 'project_access', ...target })],
      ['Group', group.id, expect.objectContaining({ add: 'project_access', as: 'Developer', ...target })],
    ]);
  });
});

describe('DELETE /projects/:id/share/:group_id', () => {
  it('answers 404 "Group Link Not Found" when the project is not shared with the group', async () => {
    const project = await createProject(api);
    const group = await createGroup(api);
    for (const groupId of [group.id, 999999]) {
      const res = await api.del(`/projects/${project.id}/share/${groupId}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: '404 Group Link Not Found' });
    }
    expect(await api.del(`/projects/${project.id}/share/x`)).toMatchObject({ status: 400, body: { error: 'group_id is invalid' } });
  });

  it('lets the group be shared again after the link is removed', async () => {
    const project = await createProject(api);
    const group = await createGroup(api);
    expect((await api.post(`/projects/${project.id}/share`, { group_id: group.id, group_access: 30 })).status).toBe(201);
    expect((await api.del(`/projects/${project.id}/share/${group.id}`)).status).toBe(204);
    expect((await api.post(`/projects/${project.id}/share`, { group_id: group.id, group_access: 10 })).status).toBe(201);
    expect((await shared(project.id)).map((s: any) => s.group_access_level)).toEqual([10]);
  });

  it('a removed group takes its links with it', async () => {
    const project = await createProject(api);
    const group = await createGroup(api);
    expect((await api.post(`/projects/${project.id}/share`, { group_id: group.id, group_access: 30 })).status).toBe(201);
    expect((await api.del(`/groups/${group.id}`)).status).toBe(202);
    await expect.poll(async () => shared(project.id), { timeout: 20_000 }).toEqual([]);
  });
});

describe('python-gitlab', () => {
  warnIfUnavailable('project share');
  it.skipIf(!pythonGitlabAvailable)('project.share(group_id, group_access) and project.unshare(group_id)', async () => {
    const project = await createProject(api);
    const group = await createGroup(api);
    const out = await runPython(
      clientScript(`
gl = gitlab.Gitlab(env["GITLAB_URL"], private_token=env["GITLAB_TOKEN"])
project = gl.projects.get(int(env["PROJECT_ID"]))
project.share(int(env["GROUP_ID"]), gitlab.const.REPORTER_ACCESS)
out["shared"] = gl.projects.get(project.id).shared_with_groups
project.unshare(int(env["GROUP_ID"]))
out["after"] = gl.projects.get(project.id).shared_with_groups
`),
      { GITLAB_URL: api.url, GITLAB_TOKEN: api.rootToken, PROJECT_ID: String(project.id), GROUP_ID: String(group.id) },
    );
    expect(out.shared).toEqual([{ group_id: group.id, group_name: group.name, group_full_path: group.full_path, group_access_level: 20, expires_at: null }]);
    expect(out.after).toEqual([]);
    expect(out.warnings).toEqual([]);
  });
});
