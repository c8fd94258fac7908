import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('merge request versions');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)

base = project.commits.create({"branch": "master", "commit_message": "Initial", "actions": [{"action": "create", "file_path": "README.md", "content": "hello\n"}]})
first = project.commits.create({"branch": "feature", "start_branch": "master", "commit_message": "Add a", "actions": [{"action": "create", "file_path": "a.txt", "content": "a\n"}]})
second = project.commits.create({"branch": "feature", "commit_message": "Change readme", "actions": [{"action": "update", "file_path": "README.md", "content": "hello\nworld\n"}]})
out["shas"] = [base.id, first.id, second.id]

mr = project.mergerequests.create({"title": "Feature", "source_branch": "feature", "target_branch": "master"})

versions = mr.diffs.list()
out["versions"] = [v.attributes for v in versions]
version = mr.diffs.get(versions[0].id)
out["version"] = version.attributes

out["commits"] = [[c.id, c.title, c.parent_ids] for c in mr.commits()]
changes = mr.changes()
out["changes"] = [changes["iid"], changes["changes_count"], changes["changes"]]

try:
    mr.diffs.get(versions[0].id + 1000)
except gitlab.exceptions.GitlabGetError as e:
    out["missing"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: merge request versions, commits and changes`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = await createProject(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id) });
  });
  afterAll(() => api?.close());

  const README = { old_path: 'README.md', new_path: 'README.md', a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: false, deleted_file: false, diff: '@@ -1 +1,2 @@\n hello\n+world\n' };
  const A = { old_path: 'a.txt', new_path: 'a.txt', a_mode: '0', b_mode: '100644', new_file: true, renamed_file: false, deleted_file: false, diff: '@@ -0,0 +1 @@\n+a\n' };

  it('lists the versions: mr.diffs.list()', () => {
    const [base, , head] = out.shas;
    // python-gitlab adds its parent attributes (project_id, mr_iid) to each object.
    expect(out.versions).toHaveLength(1);
    expect(out.versions).toMatchObject([
      { id: expect.any(Number), head_commit_sha: head, base_commit_sha: base, start_commit_sha: base, created_at: expect.any(String), merge_request_id: expect.any(Number), state: 'collected', real_size: '2' },
    ]);
  });

  it('gets one version with its commits and diffs: mr.diffs.get(id)', () => {
    const [, first, second] = out.shas;
    expect(out.version).toMatchObject({ ...out.versions[0], diffs: [README, A] });
    expect(out.version.commits.map((c: any) => [c.id, c.title, c.parent_ids])).toEqual([
      [second, 'Change readme', []],
      [first, 'Add a', []],
    ]);
    expect(out.missing).toEqual([404, '404 Not found']);
  });

  it('lists the commits and the changes: mr.commits(), mr.changes()', () => {
    const [, first, second] = out.shas;
    expect(out.commits).toEqual([
      [second, 'Change readme', []],
      [first, 'Add a', []],
    ]);
    expect(out.changes).toEqual([1, '2', [README, A]]);
  });
});
