import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createProject, eventually, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('merge request todos');

// The author marks a todo on their merge request and assigns it to a developer; the
// developer's `assigned` todo comes from the todos reactor.
const AUTHOR = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)
project.commits.create({"branch": "feature", "start_branch": "master", "commit_message": "Add a", "actions": [{"action": "create", "file_path": "a.txt", "content": "a\n"}]})
mr = project.mergerequests.create({"title": "Add a", "source_branch": "feature", "target_branch": "master", "assignee_ids": [int(env["ASSIGNEE_ID"])]})
mr.todo()
try:
    mr.todo()
except gitlab.exceptions.GitlabTodoError as e:
    out["again"] = e.response_code
todos = g.todos.list()
out["listed"] = [[t.action_name, t.target_type, t.target["iid"], t.body, t.state] for t in todos]
todos[0].mark_as_done()
out["pending_after"] = len(g.todos.list())
out["done"] = [t.state for t in g.todos.list(state="done")]
`);

const ASSIGNEE = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
todos = g.todos.list(type="MergeRequest")
out["listed"] = [[t.action_name, t.target["title"], t.author["username"]] for t in todos]
g.todos.mark_all_as_done()
out["pending_after"] = len(g.todos.list())
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: merge request todos`, () => {
  let api: TestServer;
  let author: any;
  let assignee: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = await createProject(api, { initialize_with_readme: true });
    const developer = await api.createUser({ username: 'mr-todo-dev' });
    await addMember(api, 'projects', project.id, developer.user.id, 30);
    author = await runPython(AUTHOR, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id), ASSIGNEE_ID: String(developer.user.id) });
    await eventually(async () => ((await api.get('/todos', { token: developer.token })).body.length > 0 ? true : undefined), 30_000);
    assignee = await runPython(ASSIGNEE, { FORGELOG_URL: api.url, FORGELOG_TOKEN: developer.token });
  }, 120_000);
  afterAll(() => api?.close());

  it('mr.todo() marks one (304 while it is pending); gl.todos.list(); todo.mark_as_done()', () => {
    expect(author.again).toBe(304);
    expect(author.listed).toEqual([['marked', 'MergeRequest', 1, 'Add a', 'pending']]);
    expect(author.pending_after).toBe(0);
    expect(author.done).toEqual(['done']);
  });

  it("lists the assignee's assigned todo by type and marks all done: gl.todos.mark_all_as_done()", () => {
    expect(assignee.listed).toEqual([['assigned', 'Add a', 'root']]);
    expect(assignee.pending_after).toBe(0);
  });
});
