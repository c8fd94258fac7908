import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('hook');

// python-gitlab 3.12's project.hooks (CRUD), group.hooks (CRUD) and gl.hooks (NoUpdate: GET /hooks/:id is GitLab 12's test).
const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)

hook = project.hooks.create({"url": "https://hooks.example.com/p", "push_events": True, "merge_requests_events": True, "token": "tok"})
out["created"] = hook.attributes
out["listed"] = [h.id for h in project.hooks.list()]
fetched = project.hooks.get(hook.id)
out["fetched"] = fetched.attributes
fetched.url = "https://hooks.example.com/q"
fetched.tag_push_events = True
fetched.save()
out["saved"] = project.hooks.get(hook.id).attributes
fetched.delete()
out["after_delete"] = [h.id for h in project.hooks.list()]
try:
    project.hooks.create({"url": "gopher://x"})
except gitlab.exceptions.GitlabCreateError as e:
    out["refused"] = [e.response_code, e.error_message]

group = g.groups.get(int(env["GROUP_ID"]), lazy=True)
ghook = group.hooks.create({"url": "https://hooks.example.com/g", "issues_events": True})
out["group_created"] = ghook.attributes
out["group_listed"] = [h.id for h in group.hooks.list()]
ghook.url = "https://hooks.example.com/g2"
ghook.save()
out["group_saved"] = group.hooks.get(ghook.id).attributes
ghook.delete()
out["group_after_delete"] = [h.id for h in group.hooks.list()]

shook = g.hooks.create({"url": "https://hooks.example.com/s"})
out["system_created"] = shook.attributes
out["system_listed"] = [h.id for h in g.hooks.list(all=True)]
out["system_test"] = g.hooks.get(shook.id).attributes
g.hooks.delete(shook.id)
out["system_after_delete"] = [h.id for h in g.hooks.list(all=True)]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: hooks`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer({ plan: 'starter' }, { deliveries: false });
    await settled(api);
    const project = await createProject(api);
    const group = await createGroup(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id), GROUP_ID: String(group.id) });
    out.projectId = project.id;
    out.groupId = group.id;
  });
  afterAll(() => api?.close());

  it('project.hooks.create/list/get, hook.save(), hook.delete()', () => {
    expect(out.created).toMatchObject({ url: 'https://hooks.example.com/p', project_id: out.projectId, push_events: true, merge_requests_events: true, tag_push_events: false });
    expect(out.created).not.toHaveProperty('token');
    expect(out.listed).toEqual([out.created.id]);
    expect(out.fetched).toEqual(out.created);
    expect(out.saved).toEqual({ ...out.created, url: 'https://hooks.example.com/q', tag_push_events: true });
    expect(out.after_delete).toEqual([]);
    expect(out.refused).toEqual([422, 'Invalid url given']);
  });

  it('group.hooks (starter)', () => {
    expect(out.group_created).toMatchObject({ url: 'https://hooks.example.com/g', group_id: out.groupId, issues_events: true });
    expect(out.group_listed).toEqual([out.group_created.id]);
    expect(out.group_saved).toEqual({ ...out.group_created, url: 'https://hooks.example.com/g2' });
    expect(out.group_after_delete).toEqual([]);
  });

  it('gl.hooks.create/list/get (the test event)/delete', () => {
    expect(out.system_created).toMatchObject({ url: 'https://hooks.example.com/s', push_events: false, repository_update_events: true });
    expect(out.system_listed).toContain(out.system_created.id);
    expect(out.system_test).toEqual({ event_name: 'project_create', name: 'Ruby', path: 'ruby', project_id: 1, owner_name: 'Someone', owner_email: 'example@gitlabhq.com' });
    expect(out.system_after_delete).not.toContain(out.system_created.id);
    expect(out.warnings).toEqual([]);
  });
});
