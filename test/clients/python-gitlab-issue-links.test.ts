import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('issue links');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)
other = g.projects.get(int(env["TARGET_ID"]), lazy=True)

a = project.issues.create({"title": "A"})
b = other.issues.create({"title": "B"})
source, target = a.links.create({"target_project_id": int(env["TARGET_ID"]), "target_issue_iid": b.iid})
out["created"] = [source.title, target.title, target.project_id]
listed = a.links.list()
out["listed"] = [[i.title, i.project_id] for i in listed]
out["other_side"] = [i.title for i in other.issues.get(b.iid).links.list()]
try:
    a.links.create({"target_project_id": int(env["TARGET_ID"]), "target_issue_iid": b.iid})
except gitlab.exceptions.GitlabCreateError as e:
    out["again"] = [e.response_code, e.error_message]
a.links.delete(listed[0].issue_link_id)
out["after_delete"] = [i.title for i in a.links.list()]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: issue links (starter)`, () => {
  let api: TestServer;
  let out: any;
  let targetId: number;
  beforeAll(async () => {
    api = await startTestServer({ plan: 'starter' });
    await settled(api);
    const projectId = (await createProject(api)).id;
    targetId = (await createProject(api)).id;
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(projectId), TARGET_ID: String(targetId) });
  });
  afterAll(() => api?.close());

  it('links: issue.links.create() answers the source and target issues', () => {
    expect(out.created).toEqual(['A', 'B', targetId]);
  });

  it('lists from either side: issue.links.list()', () => {
    expect(out.listed).toEqual([['B', targetId]]);
    expect(out.other_side).toEqual(['A']);
  });

  it('refuses a second link of the pair: 409', () => {
    expect(out.again).toEqual([409, 'Issue(s) already assigned']);
  });

  it('unlinks: issue.links.delete(issue_link_id)', () => {
    expect(out.after_delete).toEqual([]);
  });
});
