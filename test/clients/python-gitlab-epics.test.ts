import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('epic');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
group = g.groups.get(int(env["GROUP_ID"]), lazy=True)

epic = group.epics.create({"title": "Roadmap", "labels": "a,b", "due_date_fixed": "2020-05-01", "due_date_is_fixed": True})
out["created"] = epic.attributes
group.epics.create({"title": "Second"})
out["listed"] = [e.title for e in group.epics.list(get_all=True)]
out["opened"] = [e.title for e in group.epics.list(state="opened", labels="a", get_all=True)]
one = group.epics.get(epic.iid)
out["one"] = one.attributes

one.title = "Renamed"
one.state_event = "close"
one.save()
out["saved"] = group.epics.get(epic.iid).attributes

g.http_post("/groups/%s/epics/%s/todo" % (env["GROUP_ID"], epic.iid))
todos = g.todos.list(get_all=True)
out["todos"] = [t.attributes for t in todos]
todos[0].mark_as_done()
out["after_done"] = len(g.todos.list(get_all=True))
out["done"] = [t.state for t in g.todos.list(state="done", get_all=True)]

try:
    g.http_post("/groups/%s/epics/%s/todo" % (env["GROUP_ID"], epic.iid))
    g.http_post("/groups/%s/epics/%s/todo" % (env["GROUP_ID"], epic.iid))
except gitlab.exceptions.GitlabHttpError as e:
    out["again"] = e.response_code
g.todos.mark_all_as_done()
out["after_all"] = len(g.todos.list(get_all=True))

group.epics.delete(epic.iid)
out["left"] = [e.title for e in group.epics.list(get_all=True)]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: epics and todos`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const group = await createGroup(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, GROUP_ID: String(group.id) });
  });
  afterAll(() => api?.close());

  it('creates, lists and gets: group.epics.create() / .list() / .get()', () => {
    expect(out.created).toMatchObject({ iid: 1, title: 'Roadmap', labels: ['a', 'b'], due_date: '2020-05-01', state: 'opened' });
    expect(out.listed).toEqual(['Second', 'Roadmap']);
    expect(out.opened).toEqual(['Roadmap']);
    expect(out.one).toMatchObject({ iid: 1, title: 'Roadmap', subscribed: true });
  });

  it('saves with state_event: epic.save()', () => {
    expect(out.saved).toMatchObject({ title: 'Renamed', state: 'closed' });
  });

  it('lists todos and marks them done: gl.todos.list(), todo.mark_as_done(), gl.todos.mark_all_as_done()', () => {
    expect(out.todos).toHaveLength(1);
    expect(out.todos[0]).toMatchObject({ action_name: 'marked', target_type: 'Epic', state: 'pending', target: { iid: 1, title: 'Renamed' } });
    expect(out.after_done).toBe(0);
    expect(out.done).toEqual(['done']);
    expect(out.again).toBe(304);
    expect(out.after_all).toBe(0);
    expect(out.left).toEqual(['Second']);
    expect(out.warnings).toEqual([]);
  });
});
