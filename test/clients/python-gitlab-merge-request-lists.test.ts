import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, settled } from '../support/fixtures.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';
import { startTestServer, type TestServer } from '../support/server.js';

warnIfUnavailable('merge request lists');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
anonymous = gitlab.Gitlab(env["FORGELOG_URL"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)
group = g.groups.get(int(env["GROUP_ID"]), lazy=True)

out["global"] = [m.title for m in g.mergerequests.list(scope="all", state="opened", labels=["bug"], get_all=True)]
out["mine"] = [m.title for m in g.mergerequests.list(get_all=True)]
out["anonymous_all"] = [m.title for m in anonymous.mergerequests.list(scope="all", get_all=True)]
try:
    anonymous.mergerequests.list()
except gitlab.exceptions.GitlabAuthenticationError as e:
    out["anonymous_default"] = e.response_code
out["project"] = [m.iid for m in project.mergerequests.list(state="all", order_by="created_at", sort="asc", get_all=True)]
out["project_closed"] = [m.title for m in project.mergerequests.list(state="closed", get_all=True)]
out["project_iids"] = [m.iid for m in project.mergerequests.list(iids=[1, 3], get_all=True)]
out["project_wip"] = [m.title for m in project.mergerequests.list(wip="yes", get_all=True)]
out["group"] = [m.title for m in group.mergerequests.list(get_all=True)]
page = project.mergerequests.list(per_page=2, iterator=True)
out["page"] = [page.per_page, page.total, page.total_pages, page.next_page, len([m.iid for m in page])]
one = project.mergerequests.list(search="parser", get_all=True)[0]
out["record"] = [one.iid, one.labels, one.state, one.author["id"], type(one).__name__]
try:
    project.mergerequests.list(state="open")
except gitlab.exceptions.GitlabListError as e:
    out["bad_state"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: merge request lists`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const group = await createGroup(api, { visibility: 'public' });
    const project = (await api.post('/projects', { name: 'lists', namespace_id: group.id, visibility: 'public', initialize_with_readme: true })).body;
    await api.post(`/projects/${project.id}/labels`, { name: 'bug', color: '#ff0000' });
    const open = async (title: string, branch: string, labels?: string) => {
      await api.post(`/projects/${project.id}/repository/branches`, { branch, ref: 'master' });
      const res = await api.post(`/projects/${project.id}/merge_requests`, { title, source_branch: branch, target_branch: 'master', ...(labels ? { labels } : {}) });
      if (res.status !== 201) throw new Error(`POST merge_requests: ${res.status} ${res.text}`);
      return res.body.iid as number;
    };
    await open('Fix the parser', 'a', 'bug');
    await open('WIP: docs', 'b');
    const third = await open('Closed bug', 'c', 'bug');
    await api.put(`/projects/${project.id}/merge_requests/${third}`, { state_event: 'close' });
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id), GROUP_ID: String(group.id) });
  }, 60_000);
  afterAll(() => api?.close());

  it('gl.mergerequests.list(scope="all", state="opened", labels=["bug"]) and the default scope', () => {
    expect(out.global).toEqual(['Fix the parser']);
    expect(out.mine).toEqual(['Closed bug', 'WIP: docs', 'Fix the parser']);
    expect(out.anonymous_all).toEqual(['Closed bug', 'WIP: docs', 'Fix the parser']);
    expect(out.anonymous_default).toBe(401);
  });

  it('project.mergerequests.list(...) with state, order, iids, wip, search and pages', () => {
    expect(out.project).toEqual([1, 2, 3]);
    expect(out.project_closed).toEqual(['Closed bug']);
    expect(out.project_iids).toEqual([3, 1]);
    expect(out.project_wip).toEqual(['WIP: docs']);
    expect(out.page).toEqual([2, 3, 2, 2, 3]);
    expect(out.record).toEqual([1, ['bug'], 'opened', 1, 'ProjectMergeRequest']);
    expect(out.bad_state).toEqual([400, 'state does not have a valid value']);
  });

  it('group.mergerequests.list()', () => {
    expect(out.group).toEqual(['Closed bug', 'WIP: docs', 'Fix the parser']);
  });
});
