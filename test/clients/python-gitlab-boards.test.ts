import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('issue board');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]))

out["before"] = [b.id for b in project.boards.list(get_all=True)]
created = project.boards.create({"name": "Development"})
out["created"] = created.attributes
boards = project.boards.list(get_all=True)
out["listed"] = [[b.id, b.name] for b in boards]
board = boards[0]

bug = project.labels.create({"name": "bug", "color": "#d9534f"})
doing = project.labels.create({"name": "doing", "color": "#5cb85c"})
first = board.lists.create({"label_id": bug.id})
second = board.lists.create({"label_id": doing.id})
out["first"] = first.attributes
out["lists"] = [[l.label["name"], l.position] for l in board.lists.list(get_all=True)]

moved = board.lists.get(second.id)
moved.position = 0
moved.save()
out["moved"] = [[l.label["name"], l.position] for l in board.lists.list(get_all=True)]

try:
    board.lists.create({"label_id": bug.id})
except gitlab.exceptions.GitlabCreateError as e:
    out["duplicate"] = [e.response_code, e.error_message]

board.lists.delete(first.id)
out["after_delete"] = [[l.label["name"], l.position] for l in board.lists.list(get_all=True)]

board.name = "Renamed"
board.save()
out["renamed"] = project.boards.get(board.id).name
board.delete()
out["after_board_delete"] = [b.id for b in project.boards.list(get_all=True)]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: issue boards`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = await createProject(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id) });
  });
  afterAll(() => api?.close());

  it('lists and creates boards: project.boards.list() / .create()', () => {
    expect(out.before).toEqual([]);
    expect(out.created).toMatchObject({ name: 'Development', lists: [], group: null, milestone: null, labels: [] });
    expect(out.listed).toEqual([[out.created.id, 'Development']]);
  });

  it('creates, lists, moves and deletes lists: board.lists.create({"label_id": …}) / .list() / .save() / .delete()', () => {
    expect(out.first).toMatchObject({ label: { name: 'bug', color: '#d9534f' }, position: 0 });
    expect(out.lists).toEqual([['bug', 0], ['doing', 1]]);
    expect(out.moved).toEqual([['doing', 0], ['bug', 1]]);
    expect(out.duplicate).toEqual([400, { label_id: ['has already been taken'] }]);
    expect(out.after_delete).toEqual([['doing', 0]]);
  });

  it('renames and deletes a board: board.save() / board.delete()', () => {
    expect(out.renamed).toBe('Renamed');
    expect(out.after_board_delete).toEqual([]);
    expect(out.warnings).toEqual([]);
  });
});
