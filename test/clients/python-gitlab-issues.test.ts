import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('issue');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)
target = g.projects.get(int(env["TARGET_ID"]), lazy=True)

issue = project.issues.create({"title": "Crash", "description": "- [ ] fix it", "labels": ["bug"], "confidential": True})
out["created"] = issue.attributes
out["listed"] = [i.title for i in project.issues.list(state="opened", labels=["bug"])]
got = project.issues.get(issue.iid)
out["got"] = [got.iid, got.title, got.labels, got.confidential, got.has_tasks]

got.state_event = "close"
got.save()
out["closed"] = project.issues.get(issue.iid).state
got.state_event = "reopen"
got.title = "Crash on start"
got.save()
out["reopened"] = [project.issues.get(issue.iid).state, project.issues.get(issue.iid).title]

got.time_estimate("3h30m")
got.add_spent_time("1h")
# time_stats() answers the attribute a get() brought when there is one: a fresh get, then the endpoint itself.
out["time_stats"] = project.issues.get(issue.iid).time_stats()
out["time_stats_endpoint"] = project.issues.get(issue.iid, lazy=True).time_stats()

try:
    got.subscribe()
except gitlab.exceptions.GitlabSubscribeError as e:
    out["subscribe"] = e.response_code
got.unsubscribe()
out["unsubscribed"] = got.subscribed
got.subscribe()
out["subscribed"] = got.subscribed
got.todo()
out["todos"] = [t.target_type for t in g.todos.list()]
out["participants"] = [u["username"] for u in got.participants()]
out["user_agent"] = got.user_agent_detail()

out["global"] = [i.title for i in g.issues.list(scope="all")]
out["statistics"] = g.issues_statistics.get().statistics
out["project_statistics"] = project.issues_statistics.get().statistics

got.move(int(env["TARGET_ID"]))
out["moved"] = [got.project_id, got.title, got.state]
out["original"] = [project.issues.get(issue.iid).state, project.issues.get(issue.iid).moved_to_id == got.id]

gone = project.issues.create({"title": "Gone"})
gone.delete()
try:
    project.issues.get(gone.iid)
except gitlab.exceptions.GitlabGetError as e:
    out["deleted"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: issues`, () => {
  let api: TestServer;
  let out: any;
  let projectId: number;
  let targetId: number;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    projectId = (await createProject(api)).id;
    targetId = (await createProject(api)).id;
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(projectId), TARGET_ID: String(targetId) });
  });
  afterAll(() => api?.close());

  it('creates, lists and gets: project.issues.create() / .list() / .get()', () => {
    expect(out.created).toMatchObject({ iid: 1, project_id: projectId, title: 'Crash', labels: ['bug'], confidential: true, state: 'opened', subscribed: true });
    expect(out.listed).toEqual(['Crash']);
    expect(out.got).toEqual([1, 'Crash', ['bug'], true, true]);
  });

  it('saves with state_event: issue.save()', () => {
    expect(out.closed).toBe('closed');
    expect(out.reopened).toEqual(['opened', 'Crash on start']);
  });

  it('tracks time: issue.time_estimate() / add_spent_time() / time_stats()', () => {
    const stats = { time_estimate: 12600, total_time_spent: 3600, human_time_estimate: '3h 30m', human_total_time_spent: '1h' };
    expect(out.time_stats).toEqual(stats);
    expect(out.time_stats_endpoint).toEqual(stats);
  });

  it('subscribes, marks a todo, lists participants, reads the user agent detail', () => {
    expect(out.subscribe).toBe(304);
    expect(out.unsubscribed).toBe(false);
    expect(out.subscribed).toBe(true);
    expect(out.todos).toContain('Issue');
    expect(out.participants).toEqual(['root']);
    expect(out.user_agent).toMatchObject({ user_agent: expect.stringContaining('python-gitlab'), ip_address: expect.any(String), akismet_submitted: false });
  });

  it('lists everywhere and counts: gl.issues.list() / gl.issues_statistics / project.issues_statistics', () => {
    expect(out.global).toEqual(['Crash on start']);
    expect(out.statistics).toEqual({ counts: { all: 1, closed: 0, opened: 1 } });
    expect(out.project_statistics).toEqual({ counts: { all: 1, closed: 0, opened: 1 } });
  });

  it('moves: issue.move()', () => {
    expect(out.moved).toEqual([targetId, 'Crash on start', 'opened']);
    expect(out.original).toEqual(['closed', true]);
  });

  it('deletes: issue.delete()', () => {
    expect(out.deleted).toEqual([404, '404 Not found']);
  });
});
