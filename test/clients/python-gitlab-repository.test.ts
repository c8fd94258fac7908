import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('repository');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.create({"name": "Client Repo", "initialize_with_readme": True})

commit = project.commits.create({
    "branch": "feature",
    "start_branch": "master",
    "commit_message": "Add a script",
    "actions": [
        {"action": "create", "file_path": "bin/run.sh", "content": "#!/bin/sh\necho hi\n"},
        {"action": "chmod", "file_path": "bin/run.sh", "execute_filemode": True},
        {"action": "update", "file_path": "README.md", "content": "# Client Repo\n\nUpdated\n"},
    ],
})
out["commit"] = commit.attributes
out["commits"] = [c.title for c in project.commits.list(ref_name="feature", get_all=True)]
out["one"] = project.commits.get(commit.id).parent_ids

out["branches"] = [b.name for b in project.branches.list(get_all=True)]
project.branches.create({"branch": "topic", "ref": "feature"})
out["topic"] = project.branches.get("topic").commit["id"]
project.branches.delete("topic")
out["after_delete"] = [b.name for b in project.branches.list(get_all=True)]

f = project.files.get(file_path="README.md", ref="feature")
out["file"] = [f.file_name, f.decode().decode(), f.last_commit_id]
out["raw"] = project.files.raw(file_path="bin/run.sh", ref="feature").decode()
out["tree"] = [[t["path"], t["mode"]] for t in project.repository_tree(ref="feature", recursive=True, get_all=True)]

try:
    project.commits.create({"branch": "feature", "commit_message": "x", "actions": [{"action": "create", "file_path": "README.md", "content": "x"}]})
except gitlab.exceptions.GitlabCreateError as e:
    out["exists"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: repository`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken });
  });
  afterAll(() => api?.close());

  it('commits actions on a new branch: project.commits.create() / .list() / .get()', () => {
    expect(out.commit).toMatchObject({ title: 'Add a script', parent_ids: [expect.stringMatching(/^[0-9a-f]{40}$/)], stats: { additions: 3, deletions: 0, total: 3 } });
    expect(out.commits).toEqual(['Add a script', 'Initial commit']);
    expect(out.one).toEqual(out.commit.parent_ids);
  });

  it('creates, gets and deletes branches: project.branches', () => {
    expect(out.branches).toEqual(['feature', 'master']);
    expect(out.topic).toBe(out.commit.id);
    expect(out.after_delete).toEqual(['feature', 'master']);
  });

  it('reads files and trees: project.files.get() / .raw(), project.repository_tree()', () => {
    expect(out.file).toEqual(['README.md', '# Client Repo\n\nUpdated\n', out.commit.id]);
    expect(out.raw).toBe('#!/bin/sh\necho hi\n');
    expect(out.tree).toEqual([
      ['bin', '040000'],
      ['README.md', '100644'],
      ['bin/run.sh', '100755'],
    ]);
    expect(out.exists).toEqual([400, 'Your changes could not be committed because a file with the name `README.md` already exists.']);
  });
});
