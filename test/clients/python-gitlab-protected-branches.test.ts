import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createGroup, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('protected branch');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)

created = project.protectedbranches.create({
    "name": "release/*",
    "merge_access_level": gitlab.const.DEVELOPER_ACCESS,
    "push_access_level": gitlab.const.MAINTAINER_ACCESS,
})
out["created"] = created.attributes
project.protectedbranches.create({"name": "main", "allowed_to_push": [{"user_id": int(env["ALICE_ID"])}]})
out["listed"] = [b.name for b in project.protectedbranches.list(get_all=True)]
out["got"] = project.protectedbranches.get("release/*").attributes
out["main_push"] = project.protectedbranches.get("main").push_access_levels

try:
    project.protectedbranches.create({"name": "main"})
except gitlab.exceptions.GitlabCreateError as e:
    out["duplicate"] = [e.response_code, e.error_message]

project.protectedbranches.delete("release/*")
try:
    project.protectedbranches.get("release/*")
except gitlab.exceptions.GitlabGetError as e:
    out["missing"] = [e.response_code, e.error_message]
out["after_delete"] = [b.name for b in project.protectedbranches.list(get_all=True)]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: protected branches`, () => {
  let api: TestServer;
  let out: any;
  let alice: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    alice = await api.createUser({ name: 'Alice Py' });
    const project = await createProject(api, { group: await createGroup(api) });
    await addMember(api, 'projects', project.id, alice.user.id, 30);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id), ALICE_ID: String(alice.user.id) });
  });
  afterAll(() => api?.close());

  it('protects a branch: project.protectedbranches.create()', () => {
    expect(out.created).toMatchObject({
      name: 'release/*',
      push_access_levels: [{ access_level: 40, access_level_description: 'Maintainers' }],
      merge_access_levels: [{ access_level: 30, access_level_description: 'Developers + Maintainers' }],
    });
    expect(out.main_push).toEqual([{ access_level: 40, access_level_description: 'Alice Py', user_id: alice.user.id, group_id: null }]);
  });

  it('lists and gets a wildcard by name: list(), get("release/*")', () => {
    expect(out.listed).toEqual(['release/*', 'main']);
    expect(out.got).toEqual(out.created);
  });

  it('unprotects and raises GitLab’s errors: delete(), GitlabCreateError, GitlabGetError', () => {
    expect(out.duplicate).toEqual([409, "Protected branch 'main' already exists"]);
    expect(out.missing).toEqual([404, '404 Not found']);
    expect(out.after_delete).toEqual(['main']);
    expect(out.warnings).toEqual([]);
  });
});
