import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('milestone and label');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)

v1 = project.milestones.create({"title": "v1.0", "description": "First", "start_date": "2020-01-01", "due_date": "2020-02-01"})
out["created"] = v1.attributes
project.milestones.create({"title": "v2.0"})
out["listed"] = [m.title for m in project.milestones.list(get_all=True)]
out["one"] = project.milestones.get(v1.id).attributes

v1.state_event = "close"
v1.save()
out["closed"] = project.milestones.get(v1.id).state
out["active"] = [m.title for m in project.milestones.list(state="active", get_all=True)]
v1.state_event = "activate"
v1.title = "v1.1"
v1.save()
reopened = project.milestones.get(v1.id)
out["reopened"] = [reopened.state, reopened.title]

try:
    project.milestones.create({"title": "v2.0"})
except gitlab.exceptions.GitlabCreateError as e:
    out["duplicate"] = [e.response_code, e.error_message]

bug = project.labels.create({"name": "bug", "color": "red", "priority": 1})
out["label"] = bug.attributes
project.labels.create({"name": "docs", "color": "#428BCA", "description": "Documentation"})
out["labels"] = [[l.name, l.color] for l in project.labels.list(get_all=True)]
docs = project.labels.get("docs")
docs.new_name = "documentation"
docs.save()
out["renamed"] = [l.name for l in project.labels.list(get_all=True)]
project.labels.delete("bug")
out["after_delete"] = [l.name for l in project.labels.list(get_all=True)]
try:
    project.labels.create({"name": "documentation", "color": "#fff"})
except gitlab.exceptions.GitlabCreateError as e:
    out["label_duplicate"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: milestones and labels`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = await createProject(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id) });
  });
  afterAll(() => api?.close());

  it('creates, lists and gets milestones: project.milestones.create() / .list() / .get()', () => {
    expect(out.created).toMatchObject({ iid: 1, title: 'v1.0', description: 'First', state: 'active', start_date: '2020-01-01', due_date: '2020-02-01' });
    expect(out.listed).toEqual(['v1.0', 'v2.0']);
    expect(out.one).toEqual(out.created);
  });

  it('closes and activates with milestone.save() and state_event', () => {
    expect(out.closed).toBe('closed');
    expect(out.active).toEqual(['v2.0']);
    expect(out.reopened).toEqual(['active', 'v1.1']);
    expect(out.duplicate).toEqual([400, 'Failed to create milestone {:title=>["already being used for another group or project milestone."]}']);
  });

  it('creates, lists, renames and deletes labels: project.labels.create() / .list() / .save() / .delete()', () => {
    expect(out.label).toMatchObject({ name: 'bug', color: '#FF0000', priority: 1, subscribed: false, is_project_label: true });
    expect(out.labels).toEqual([['bug', '#FF0000'], ['docs', '#428BCA']]);
    expect(out.renamed).toEqual(['bug', 'documentation']);
    expect(out.after_delete).toEqual(['documentation']);
    expect(out.label_duplicate).toEqual([409, 'Label already exists']);
    expect(out.warnings).toEqual([]);
  });
});
