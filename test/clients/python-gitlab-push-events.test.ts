import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('push events');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["ROOT_TOKEN"])
project = g.projects.create({"name": "Push Feed", "initialize_with_readme": True})
commit = project.commits.create({
    "branch": "master",
    "commit_message": "Add the changelog\n\nWith a body",
    "actions": [{"action": "create", "file_path": "CHANGELOG.md", "content": "# Changes\n"}],
})
out["readme"] = project.commits.list(ref_name="master", get_all=True)[-1].id
out["commit"] = commit.id
project.branches.create({"branch": "topic", "ref": "master"})
project.branches.delete("topic")

out["pushed"] = [[e.action_name, e.target_type, e.push_data] for e in project.events.list(action="pushed", get_all=True)]
out["all"] = [e.action_name for e in project.events.list(sort="asc", get_all=True)]
out["mine"] = [[e.action_name, e.push_data["ref"]] for e in g.events.list(action="pushed", get_all=True) if e.project_id == project.id]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: push events`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, ROOT_TOKEN: api.rootToken });
  });
  afterAll(() => api?.close());

  it('project.events.list(action="pushed") shows push_data for each push', () => {
    const { readme, commit } = out;
    const data = (action: string, from: string | null, to: string | null, ref: string, count: number, title: string | null) => ({
      commit_count: count, action, ref_type: 'branch', commit_from: from, commit_to: to, ref, commit_title: title, ref_count: null,
    });
    expect(out.pushed).toEqual([
      ['deleted', null, data('removed', commit, null, 'topic', 0, null)],
      ['pushed new', null, data('created', null, commit, 'topic', 0, null)],
      ['pushed to', null, data('pushed', readme, commit, 'master', 1, 'Add the changelog')],
      ['pushed new', null, data('created', null, readme, 'master', 1, 'Initial commit')],
    ]);
    expect(out.all).toEqual(['created', 'pushed new', 'pushed to', 'pushed new', 'deleted']);
  });

  it('gl.events.list(action="pushed") has them as the pusher\'s own', () => {
    expect(out.mine).toEqual([['deleted', 'topic'], ['pushed new', 'topic'], ['pushed to', 'master'], ['pushed new', 'master']]);
  });
});
