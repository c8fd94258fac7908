import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('merge request rebase');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)
mr = project.mergerequests.get(int(env["IID"]), lazy=True)
out["rebase"] = mr.rebase()
again = project.mergerequests.get(int(env["IID"]), include_rebase_in_progress=True)
out["after"] = {k: again.attributes.get(k) for k in ("rebase_in_progress", "merge_error")}
out["source"] = project.commits.get("feature").attributes
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: rebasing merge requests`, () => {
  let api: TestServer;
  let out: any;
  let master: string;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = (await api.post('/projects', { name: 'py-rebase', initialize_with_readme: true })).body;
    await api.post(`/projects/${project.id}/repository/commits`, {
      branch: 'feature',
      start_branch: 'master',
      commit_message: 'Add a',
      actions: [{ action: 'create', file_path: 'a.txt', content: 'a\n' }],
    });
    const opened = await api.post(`/projects/${project.id}/merge_requests`, { title: 'Add a', source_branch: 'feature', target_branch: 'master' });
    const moved = await api.post(`/projects/${project.id}/repository/commits`, { branch: 'master', commit_message: 'Add b', actions: [{ action: 'create', file_path: 'b.txt', content: 'b\n' }] });
    master = moved.body.id;
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id), IID: String(opened.body.iid) });
  });
  afterAll(() => api?.close());

  it('rebases: mr.rebase() answers rebase_in_progress, and the source sits on the target head', () => {
    expect(out.rebase).toEqual({ rebase_in_progress: false });
    expect(out.after).toEqual({ rebase_in_progress: false, merge_error: null });
    expect(out.source).toMatchObject({ message: 'Add a', parent_ids: [master] });
    expect(out.warnings).toEqual([]);
  });
});
