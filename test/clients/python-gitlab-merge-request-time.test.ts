import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';
import { startTestServer, type TestServer } from '../support/server.js';

warnIfUnavailable('merge request time tracking');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
author = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["AUTHOR_TOKEN"])
created = author.projects.get(int(env["PROJECT_ID"]), lazy=True).mergerequests.create({"title": "Add a", "source_branch": "feature", "target_branch": "master"})
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)
mr = project.mergerequests.get(created.iid)
out["subscribed_at_first"] = mr.subscribed

out["estimate"] = mr.time_estimate("3h30m")
out["spent"] = mr.add_spent_time("1h")
# time_stats() answers the attributes a fetched merge request holds, else GET …/time_stats.
out["stats"] = project.mergerequests.get(created.iid, lazy=True).time_stats()
out["stats_of_fetched"] = project.mergerequests.get(created.iid).time_stats()
out["reset_estimate"] = mr.reset_time_estimate()
out["reset_spent"] = mr.reset_spent_time()
try:
    mr.add_spent_time("-1h")
except gitlab.exceptions.GitlabTimeTrackingError as e:
    out["below_zero"] = [e.response_code, e.error_message]

mr.subscribe()
out["subscribed"] = mr.subscribed
try:
    mr.subscribe()
except gitlab.exceptions.GitlabSubscribeError as e:
    out["subscribed_again"] = e.response_code
mr.unsubscribe()
out["unsubscribed"] = mr.subscribed
out["participants"] = [u["username"] for u in mr.participants()]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: merge request time tracking and subscriptions`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    const project = (await api.post('/projects', { name: 'py-mr-time', initialize_with_readme: true })).body;
    const commit = await api.post(`/projects/${project.id}/repository/commits`, {
      branch: 'feature',
      start_branch: 'master',
      commit_message: 'Add a file',
      actions: [{ action: 'create', file_path: 'a.txt', content: 'a\n' }],
    });
    expect(commit.status).toBe(201);
    const author = await api.createUser({ username: 'py-author' });
    // A participant is listed when they may read the (private) project.
    expect((await api.post(`/projects/${project.id}/members`, { user_id: author.user.id, access_level: 30 })).status).toBe(201);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id), AUTHOR_TOKEN: author.token });
  });
  afterAll(() => api?.close());

  it('mr.time_estimate(), add_spent_time(), time_stats(), reset_time_estimate(), reset_spent_time()', () => {
    expect(out.estimate).toEqual({ time_estimate: 12600, total_time_spent: 0, human_time_estimate: '3h 30m', human_total_time_spent: null });
    expect(out.spent).toEqual({ time_estimate: 12600, total_time_spent: 3600, human_time_estimate: '3h 30m', human_total_time_spent: '1h' });
    expect(out.stats).toEqual(out.spent);
    expect(out.stats_of_fetched).toEqual(out.spent);
    expect(out.reset_estimate).toEqual({ time_estimate: 0, total_time_spent: 3600, human_time_estimate: null, human_total_time_spent: '1h' });
    expect(out.reset_spent).toEqual({ time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null });
    expect(out.below_zero).toEqual([400, { base: ['Time to subtract exceeds the total time spent'] }]);
  });

  it('project.mergerequests.create/get, mr.subscribe(), mr.unsubscribe(), mr.participants()', () => {
    expect(out.subscribed_at_first).toBe(false);
    expect(out.subscribed).toBe(true);
    expect(out.subscribed_again).toBe(304);
    expect(out.unsubscribed).toBe(false);
    expect(out.participants).toEqual(['py-author']);
    expect(out.warnings).toEqual([]);
  });
});
