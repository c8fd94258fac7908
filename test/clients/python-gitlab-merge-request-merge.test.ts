import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('merge request merge');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)
mr = project.mergerequests.get(int(env["IID"]), lazy=True)

try:
    mr.merge(sha="0" * 40)
except gitlab.exceptions.GitlabMRClosedError as e:
    out["stale_sha"] = [e.response_code, e.error_message]

mr.merge(merge_commit_message="Ship it", should_remove_source_branch=True, sha=env["HEAD"])
out["merged"] = {k: mr.attributes.get(k) for k in ("state", "merge_commit_sha", "merged_by", "sha")}
out["master"] = project.commits.get("master").attributes
out["branches"] = [b.name for b in project.branches.list(get_all=True)]

try:
    mr.merge()
except gitlab.exceptions.GitlabMRClosedError as e:
    out["again"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: accepting merge requests`, () => {
  let api: TestServer;
  let out: any;
  let head: string;
  let masterBefore: string;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = (await api.post('/projects', { name: 'py-merge', initialize_with_readme: true })).body;
    masterBefore = (await api.get(`/projects/${project.id}/repository/branches/master`)).body.commit.id;
    const pushed = await api.post(`/projects/${project.id}/repository/commits`, {
      branch: 'feature',
      start_branch: 'master',
      commit_message: 'Add a',
      actions: [{ action: 'create', file_path: 'a.txt', content: 'a\n' }],
    });
    head = pushed.body.id;
    const opened = await api.post(`/projects/${project.id}/merge_requests`, { title: 'Add a', source_branch: 'feature', target_branch: 'master' });
    const id = opened.body.id;
    const row = () => api.handle.db.selectFrom('merge_requests').select(['iid', 'merge_status']).where('id', '=', id).executeTakeFirstOrThrow();
    await eventually(async () => ((await row()).merge_status === 'can_be_merged' ? true : undefined), 30_000);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id), IID: String((await row()).iid), HEAD: head });
  });
  afterAll(() => api?.close());

  it('merges: mr.merge() with a message, sha and should_remove_source_branch', () => {
    expect(out.stale_sha).toEqual([409, `SHA does not match HEAD of source branch: ${head}`]);
    expect(out.merged).toMatchObject({ state: 'merged', merge_commit_sha: out.master.id, merged_by: { username: 'root' }, sha: head });
    expect(out.master).toMatchObject({ message: 'Ship it', parent_ids: [masterBefore, head] });
    expect(out.branches).toEqual(['master']);
  });

  it('raises GitlabMRClosedError (405) for a merge request already merged', () => {
    expect(out.again).toEqual([405, '405 Method Not Allowed']);
    expect(out.warnings).toEqual([]);
  });
});
