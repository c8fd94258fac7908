import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('events');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["ALICE_TOKEN"])
out["own"] = [e.attributes for e in g.events.list(get_all=True)]
out["own_joined"] = [e.action_name for e in g.events.list(action="joined", get_all=True)]

admin = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["ROOT_TOKEN"])
bob = admin.users.get(int(env["BOB_ID"]), lazy=True)
out["bob"] = [e.action_name for e in bob.events.list(get_all=True)]

project = admin.projects.get(int(env["PROJECT_ID"]), lazy=True)
out["project"] = [[e.action_name, e.author_username] for e in project.events.list(get_all=True)]
out["project_asc"] = [e.action_name for e in project.events.list(sort="asc", get_all=True)]
out["project_page"] = [e.action_name for e in project.events.list(per_page=1, page=2)]
try:
    project.events.list(action="opened")
except gitlab.exceptions.GitlabListError as e:
    out["refused"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: activity events`, () => {
  let api: TestServer;
  let out: any;
  let alice: { user: any; token: string };
  let bob: { user: any; token: string };
  let project: { id: number };
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    alice = await api.createUser({}, ['read_user']);
    const aliceApi = await api.createUser();
    bob = await api.createUser();
    project = await createProject(api, { token: aliceApi.token, visibility: 'public' });
    // alice (read_user token) joins; bob joins the project aliceApi created.
    await addMember(api, 'projects', project.id, alice.user.id, 30);
    await addMember(api, 'projects', project.id, bob.user.id, 20);
    out = await runPython(SCRIPT, {
      FORGELOG_URL: api.url,
      ROOT_TOKEN: api.rootToken,
      ALICE_TOKEN: alice.token,
      BOB_ID: String(bob.user.id),
      PROJECT_ID: String(project.id),
    });
  });
  afterAll(() => api?.close());

  it("gl.events.list(): the caller's own activity, with a read_user token", () => {
    expect(out.own).toEqual([expect.objectContaining({ title: null, project_id: project.id, action_name: 'joined', author_id: alice.user.id, author_username: alice.user.username, data: null })]);
    expect(out.own_joined).toEqual(['joined']);
  });

  it("user.events.list() and project.events.list(), filters and pages", () => {
    expect(out.bob).toEqual(['joined']);
    expect(out.project).toEqual([
      ['joined', bob.user.username],
      ['joined', alice.user.username],
      ['created', expect.any(String)],
    ]);
    expect(out.project_asc).toEqual(['created', 'joined', 'joined']);
    expect(out.project_page).toEqual(['joined']);
    expect(out.refused).toEqual([400, 'action does not have a valid value']);
    expect(out.warnings).toEqual([]);
  });
});
