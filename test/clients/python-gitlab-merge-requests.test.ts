import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('merge request');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)

project.commits.create({"branch": "master", "commit_message": "Initial", "actions": [{"action": "create", "file_path": "README.md", "content": "hello\n"}]})
head = project.commits.create({"branch": "feature", "start_branch": "master", "commit_message": "Add a", "actions": [{"action": "create", "file_path": "a.txt", "content": "a\n"}]})
out["head"] = head.id

mr = project.mergerequests.create({"title": "Add a", "source_branch": "feature", "target_branch": "master", "labels": ["one", "two"], "remove_source_branch": True})
out["created"] = mr.attributes

try:
    project.mergerequests.create({"title": "Again", "source_branch": "feature", "target_branch": "master"})
except gitlab.exceptions.GitlabCreateError as e:
    out["duplicate"] = [e.response_code, e.error_message]

got = project.mergerequests.get(mr.iid, include_diverged_commits_count=True)
out["got"] = [got.iid, got.title, got.diverged_commits_count, got.diff_refs["head_sha"]]

got.title = "Add a, renamed"
got.description = "Now with a description"
got.save()
out["saved"] = [got.title, got.description]

got.state_event = "close"
got.save()
out["closed"] = project.mergerequests.get(mr.iid).state
got.state_event = "reopen"
got.save()
out["reopened"] = project.mergerequests.get(mr.iid).state

got.delete()
try:
    project.mergerequests.get(mr.iid)
except gitlab.exceptions.GitlabGetError as e:
    out["deleted"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: merge requests`, () => {
  let api: TestServer;
  let out: any;
  let projectId: number;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = await createProject(api);
    projectId = project.id;
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id) });
  });
  afterAll(() => api?.close());

  it('creates and gets: project.mergerequests.create() / .get()', () => {
    expect(out.created).toMatchObject({
      iid: 1,
      project_id: projectId,
      title: 'Add a',
      state: 'opened',
      source_branch: 'feature',
      target_branch: 'master',
      labels: ['one', 'two'],
      force_remove_source_branch: true,
      sha: out.head,
      changes_count: '1',
    });
    expect(out.duplicate).toEqual([409, ['Another open merge request already exists for this source branch: !1']]);
    expect(out.got).toEqual([1, 'Add a', 0, out.head]);
  });

  it('saves, closes, reopens and deletes: mr.save(), mr.delete()', () => {
    expect(out.saved).toEqual(['Add a, renamed', 'Now with a description']);
    expect(out.closed).toBe('closed');
    expect(out.reopened).toBe('opened');
    expect(out.deleted).toEqual([404, '404 Not found']);
    expect(out.warnings).toEqual([]);
  });
});
