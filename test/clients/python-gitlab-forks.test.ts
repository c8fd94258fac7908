import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, createProject } from '../support/fixtures.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';
import { startTestServer, type TestServer } from '../support/server.js';

warnIfUnavailable('forks and transfer');

const SCRIPT = clientScript(String.raw`
admin = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
user = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["USER_TOKEN"])
source = user.projects.get(int(env["SOURCE_ID"]), lazy=True)
fork = source.forks.create({})
out["fork"] = [fork.path_with_namespace, fork.forked_from_project["id"], fork.default_branch]
out["forks"] = [p.id for p in source.forks.list()]
forked = admin.projects.get(fork.id)
forked.commits.create({"branch": "feature", "start_branch": "master", "commit_message": "From the fork", "actions": [{"action": "create", "file_path": "fork.txt", "content": "fork\n"}]})
mr = forked.mergerequests.create({"source_branch": "feature", "target_branch": "master", "title": "From the fork", "target_project_id": int(env["SOURCE_ID"])})
out["mr"] = [mr.project_id, mr.source_project_id, mr.target_project_id]
upstream_mr = admin.projects.get(int(env["SOURCE_ID"])).mergerequests.get(mr.iid)
out["changes"] = [c["new_path"] for c in upstream_mr.changes()["changes"]]
ref = upstream_mr.merge_ref()
out["merge_ref"] = admin.projects.get(int(env["SOURCE_ID"])).commits.get(ref["commit_id"]).parent_ids[1] == mr.sha
try:
    source.forks.create({})
except gitlab.exceptions.GitlabCreateError as e:
    out["again"] = [e.response_code, e.error_message]
mine = user.projects.get(fork.id)
mine.delete_fork_relation()
out["unlinked"] = "forked_from_project" in user.projects.get(fork.id).attributes
linked = admin.projects.get(fork.id)
linked.create_fork_relation(int(env["SOURCE_ID"]))
out["linked"] = admin.projects.get(fork.id).forked_from_project["id"]
mine.transfer_project(env["GROUP_PATH"])
out["transferred"] = user.projects.get(fork.id).path_with_namespace
try:
    mine.transfer_project("no-such-namespace")
except gitlab.exceptions.GitlabTransferProjectError as e:
    out["refused"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: forks and transfer`, () => {
  let api: TestServer;
  let out: any;
  let user: { user: any; token: string };
  let source: { id: number; path: string };
  let group: { id: number; full_path: string };
  beforeAll(async () => {
    api = await startTestServer();
    user = await api.createUser();
    source = await createProject(api, { visibility: 'public', initialize_with_readme: true });
    group = await createGroup(api, { token: user.token, visibility: 'public' });
    out = await runPython(SCRIPT, {
      FORGELOG_URL: api.url,
      FORGELOG_TOKEN: api.rootToken,
      USER_TOKEN: user.token,
      SOURCE_ID: String(source.id),
      GROUP_PATH: group.full_path,
    });
  });
  afterAll(() => api?.close());

  it('forks into the caller\'s namespace and lists the forks: project.forks.create({}), project.forks.list()', () => {
    expect(out.fork).toEqual([`${user.user.username}/${source.path}`, source.id, 'master']);
    expect(out.forks).toHaveLength(1);
    expect(out.again).toEqual([409, { name: ['has already been taken'], path: ['has already been taken'] }]);
  });

  it('opens a merge request from the fork into its source: mergerequests.create({target_project_id}), mr.changes(), mr.merge_ref()', () => {
    expect(out.mr).toEqual([source.id, expect.any(Number), source.id]);
    expect(out.mr[1]).not.toBe(source.id);
    expect(out.changes).toEqual(['fork.txt']);
    expect(out.merge_ref).toBe(true);
  });

  it('removes and creates the relation: project.delete_fork_relation(), project.create_fork_relation(id)', () => {
    expect(out.unlinked).toBe(false);
    expect(out.linked).toBe(source.id);
  });

  it('transfers: project.transfer_project(namespace)', () => {
    expect(out.transferred).toBe(`${group.full_path}/${source.path}`);
    expect(out.refused).toEqual([404, '404 Namespace Not Found']);
    // python-gitlab 3.12 deprecates transfer_project (one warning per call); nothing else warns.
    const deprecated = expect.stringMatching(/^The project\.transfer_project\(\) method is deprecated/);
    expect(out.warnings).toEqual([deprecated, deprecated]);
  });
});
