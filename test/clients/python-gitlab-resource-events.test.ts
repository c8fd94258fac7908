import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('resource events');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)

v1 = project.milestones.create({"title": "v1"})
issue = project.issues.create({"title": "Tracked", "labels": ["bug", "ui"], "milestone_id": v1.id})
issue.labels = ["bug"]
issue.save()
issue.state_event = "close"
issue.save()

events = issue.resourcelabelevents.list()
out["labels"] = [[e.action, e.label["name"], e.resource_type, e.resource_id == issue.id, e.user["username"]] for e in events]
out["label_one"] = issue.resourcelabelevents.get(events[0].id).attributes
out["milestones"] = [[e.action, e.milestone["title"], e.state] for e in issue.resourcemilestoneevents.list()]
out["states"] = [e.state for e in issue.resourcestateevents.list()]

project.commits.create({"branch": "feature", "start_branch": "master", "commit_message": "Add a", "actions": [{"action": "create", "file_path": "a.txt", "content": "a"}]})
mr = project.mergerequests.create({"source_branch": "feature", "target_branch": "master", "title": "Feature", "labels": ["review"]})
out["mr_labels"] = [[e.action, e.label["name"], e.resource_type] for e in mr.resourcelabelevents.list()]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: resource events`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = await createProject(api, { initialize_with_readme: true });
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id) });
  });
  afterAll(() => api?.close());

  it('issue.resourcelabelevents.list() and .get()', () => {
    expect(out.labels).toEqual([
      ['add', 'bug', 'Issue', true, 'root'],
      ['add', 'ui', 'Issue', true, 'root'],
      ['remove', 'ui', 'Issue', true, 'root'],
    ]);
    // python-gitlab adds the parent's attributes (project_id, issue_iid) to a fetched object's.
    expect(Object.keys(out.label_one).filter((k) => k !== 'project_id' && k !== 'issue_iid')).toEqual(['id', 'user', 'created_at', 'resource_type', 'resource_id', 'label', 'action']);
    expect(out.label_one.label).toMatchObject({ name: 'bug' });
  });

  it('issue.resourcemilestoneevents.list() and issue.resourcestateevents.list()', () => {
    expect(out.milestones).toEqual([['add', 'v1', 'opened']]);
    expect(out.states).toEqual(['closed']);
  });

  it('mr.resourcelabelevents.list()', () => {
    expect(out.mr_labels).toEqual([['add', 'review', 'MergeRequest']]);
  });
});
