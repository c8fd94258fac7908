import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('repository diffs');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.create({"name": "Client Diffs", "initialize_with_readme": True})
commit = project.commits.create({
    "branch": "feature",
    "start_branch": "master",
    "commit_message": "Change the readme",
    "actions": [
        {"action": "update", "file_path": "README.md", "content": "# Client Diffs\n\nChanged\n"},
        {"action": "create", "file_path": "new.txt", "content": "new\n"},
    ],
})
out["diff"] = project.commits.get(commit.id).diff()
compare = project.repository_compare("master", "feature")
out["compare"] = {"commit": compare["commit"]["id"], "commits": [c["id"] for c in compare["commits"]], "paths": [d["new_path"] for d in compare["diffs"]], "same": compare["compare_same_ref"]}
out["commit_id"] = commit.id
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: repository diffs`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken });
  });
  afterAll(() => api?.close());

  it("reads a commit's diff: project.commits.get(sha).diff()", () => {
    expect(out.diff).toEqual([
      { old_path: 'README.md', new_path: 'README.md', a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: false, deleted_file: false, diff: '@@ -1,2 +1,3 @@\n # Client Diffs\n \n+Changed\n' },
      { old_path: 'new.txt', new_path: 'new.txt', a_mode: '0', b_mode: '100644', new_file: true, renamed_file: false, deleted_file: false, diff: '@@ -0,0 +1 @@\n+new\n' },
    ]);
    expect(out.warnings).toEqual([]);
  });

  it('compares two branches: project.repository_compare()', () => {
    expect(out.compare).toEqual({ commit: out.commit_id, commits: [out.commit_id], paths: ['README.md', 'new.txt'], same: false });
  });
});
