import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueStreamId } from '../../src/domain/issues/events.js';
import { addMember, createGroup, createProject, eventually, settled } from '../support/fixtures.js';
import { startIssueWorld, type IssueUser, type IssueVisibility } from '../support/issues.js';
import { permissionMatrix } from '../support/matrix.js';
import { grantRoles, type Callers, type Role } from '../support/roles.js';
import type { TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
let author: IssueUser;
let assignee: IssueUser;
let projects: Readonly<Record<IssueVisibility, number>>;
let issue: (projectId: number, body?: Record<string, unknown>, token?: string | null) => Promise<number>;

beforeAll(async () => {
  ({ api, callers, author, assignee, projects, issue } = await startIssueWorld());
  await settled(api);
  // A developer merges into the README's master: unprotected (default_branch_protection, test/http/readme-protection.test.ts).
  await api.put('/application/settings', { default_branch_protection: 0 });
});
afterAll(() => api.close());

const issueRow = (projectId: number, iid: number) => api.runtime.app.db.selectFrom('issues').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirstOrThrow();

describe('subscriptions, participants, todo', () => {
  it('subscribes (201), 304 again, unsubscribes (201); the author is subscribed without asking', async () => {
    const iid = await issue(projects.private);
    const path = `/projects/${projects.private}/issues/${iid}`;
    const token = callers.developer.token;
    const on = await api.post(`${path}/subscribe`, undefined, { token });
    expect(on.status).toBe(201);
    expect(on.body).toMatchObject({ iid, subscribed: true });
    expect((await api.post(`${path}/subscribe`, undefined, { token })).status).toBe(304);
    const off = await api.post(`${path}/unsubscribe`, undefined, { token });
    expect(off.status).toBe(201);
    expect(off.body.subscribed).toBe(false);
    expect((await api.post(`${path}/subscribe`, undefined, { token: author.token })).status).toBe(304);
    const types = (await api.events(issueStreamId((await issueRow(projects.private, iid)).id))).map((e) => e.type);
    expect(types).toEqual(['IssueOpened', 'IssueSubscribed', 'IssueUnsubscribed']);
  });

  it('lists the participants: author, then assignees, paginated', async () => {
    const iid = await issue(projects.private, { assignee_ids: [assignee.id] }, callers.developer.token);
    const res = await api.get(`/projects/${projects.private}/issues/${iid}/participants`, { token: callers.guest.token });
    expect(res.status).toBe(200);
    expect(res.body.map((u: { username: string }) => u.username)).toEqual([callers.developer.user!.username, assignee.username]);
    expect(res.headers.get('x-total')).toBe('2');
  });

  it('marks a todo (201, the issue as its target), 304 for the same pending one', async () => {
    const iid = await issue(projects.private, { title: 'Todo me' });
    const res = await api.post(`/projects/${projects.private}/issues/${iid}/todo`, undefined, { token: callers.reporter.token });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ action_name: 'marked', target_type: 'Issue', target: { iid, title: 'Todo me' }, body: 'Todo me', state: 'pending' });
    expect((await api.post(`/projects/${projects.private}/issues/${iid}/todo`, undefined, { token: callers.reporter.token })).status).toBe(304);
  });

  it('makes assigned and mentioned todos, not for who may not read a confidential issue', async () => {
    const created = await api.post(
      `/projects/${projects.private}/issues`,
      { title: `Look @${callers.guest.user!.username}`, description: `cc @${callers.reporter.user!.username}`, assignee_ids: [assignee.id], confidential: true },
      { token: callers.developer.token },
    );
    const todosOf = async (token: string | null) => (await api.get('/todos', { token })).body.filter((t: { target: { id: number } }) => t.target.id === created.body.id);
    const assigned = await eventually(async () => ((await todosOf(assignee.token)).length > 0 ? await todosOf(assignee.token) : undefined));
    expect(assigned.map((t: { action_name: string }) => t.action_name)).toEqual(['assigned']);
    const mentioned = await eventually(async () => ((await todosOf(callers.reporter.token)).length > 0 ? await todosOf(callers.reporter.token) : undefined));
    expect(mentioned.map((t: { action_name: string }) => t.action_name)).toEqual(['mentioned']);
    expect(await todosOf(callers.guest.token)).toEqual([]);
  });
});

describe('time tracking', () => {
  it('estimates, spends, resets and shows time_stats (admin_issue: reporters)', async () => {
    const iid = await issue(projects.private);
    const path = `/projects/${projects.private}/issues/${iid}`;
    const token = callers.reporter.token;
    expect((await api.post(`${path}/time_estimate`, { duration: '3h30m' }, { token })).body).toEqual({ time_estimate: 12600, total_time_spent: 0, human_time_estimate: '3h 30m', human_total_time_spent: null });
    const spent = await api.post(`${path}/add_spent_time`, { duration: '1h' }, { token });
    expect(spent.status).toBe(201);
    expect(spent.body.total_time_spent).toBe(3600);
    expect((await api.get(`${path}/time_stats`, { token: callers.guest.token })).body).toMatchObject({ time_estimate: 12600, total_time_spent: 3600 });
    expect((await api.get(path, { token })).body.time_stats.human_total_time_spent).toBe('1h');
    expect((await api.post(`${path}/reset_spent_time`, undefined, { token })).body.total_time_spent).toBe(0);
    expect((await api.post(`${path}/reset_time_estimate`, undefined, { token })).body.time_estimate).toBe(0);
    expect((await api.post(`${path}/time_estimate`, { duration: 'soon' }, { token })).body).toEqual({ message: { time_estimate: ['has an invalid format'] } });
    expect((await api.post(`${path}/time_estimate`, { duration: '1h' }, { token: callers.guest.token })).status).toBe(403);
  });
});

describe('POST /projects/:id/issues/:issue_iid/move', () => {
  it('moves into another project: a new issue there (201), the old one closed with moved_to_id', async () => {
    const iid = await issue(projects.private, { title: 'Moving', labels: 'bug' }, callers.reporter.token);
    const res = await api.post(`/projects/${projects.private}/issues/${iid}/move`, { to_project_id: projects.public }, { token: callers.reporter.token });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ project_id: projects.public, title: 'Moving', state: 'opened', author: { id: callers.reporter.user!.id } });
    const old = await api.get(`/projects/${projects.private}/issues/${iid}`, { token: callers.reporter.token });
    expect(old.body).toMatchObject({ state: 'closed', moved_to_id: res.body.id });
    const again = await api.post(`/projects/${projects.private}/issues/${iid}/move`, { to_project_id: projects.internal }, { token: callers.reporter.token });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ message: 'Cannot move issue due to insufficient permissions!' });
  });

  it('refuses its own project, a project without admin_issue (400), an unknown one (404), a guest (400)', async () => {
    const iid = await issue(projects.private, { title: 'Stay' });
    const path = `/projects/${projects.private}/issues/${iid}/move`;
    expect((await api.post(path, { to_project_id: projects.private }, { token: callers.reporter.token })).body).toEqual({ message: 'Cannot move issue to project it originates from!' });
    const elsewhere = await createProject(api, { token: callers.owner.token!, visibility: 'private' });
    expect((await api.post(path, { to_project_id: elsewhere.id }, { token: callers.reporter.token })).status).toBe(400);
    const unknown = await api.post(path, { to_project_id: 999999 }, { token: callers.reporter.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Project Not Found' });
    expect((await api.post(path, { to_project_id: projects.public }, { token: callers.guest.token })).status).toBe(400);
    expect((await api.post(path, {}, { token: callers.reporter.token })).body).toEqual({ error: 'to_project_id is missing' });
  });
});

describe('GET /projects/:id/issues/:issue_iid/user_agent_detail', () => {
  it('answers the creating request\'s user agent and IP to administrators (403 others)', async () => {
    const created = await api.post(`/projects/${projects.private}/issues`, { title: 'UA' }, { token: author.token, headers: { 'User-Agent': 'python-gitlab/3.12.0' } });
    const path = `/projects/${projects.private}/issues/${created.body.iid}/user_agent_detail`;
    const res = await api.get(path, { token: callers.admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ user_agent: 'python-gitlab/3.12.0', ip_address: expect.any(String), akismet_submitted: false });
    expect((await api.get(path, { token: callers.owner.token })).status).toBe(403);
    expect((await api.get(path, { token: null })).status).toBe(401);
  });
});

describe('merge requests that close issues', () => {
  it('closes_issues, closed_by, related_merge_requests, and merging closes the issues', async () => {
    const group = await createGroup(api, { token: callers.owner.token!, visibility: 'private' });
    const project = await createProject(api, { token: callers.owner.token!, group, visibility: 'private', initialize_with_readme: true });
    await grantRoles(api, callers, { projects: project.id });
    const dev = callers.developer.token!;
    const one = await issue(project.id, { title: 'One' }, dev);
    const two = await issue(project.id, { title: 'Two' }, dev);
    const other = await issue(projects.private, { title: 'Elsewhere' }, dev);
    const otherPath = (await api.get(`/projects/${projects.private}`)).body.path_with_namespace;
    const commit = await api.post(`/projects/${project.id}/repository/commits`, { branch: 'fix', start_branch: 'master', commit_message: 'Fix', actions: [{ action: 'create', file_path: 'f.txt', content: 'f\n' }] }, { token: dev });
    expect(commit.status).toBe(201);
    const mr = await api.post(`/projects/${project.id}/merge_requests`, { title: 'Fix', source_branch: 'fix', target_branch: 'master', description: `Closes #${one} and ${otherPath}#${other}. See #${two}.` }, { token: dev });
    expect(mr.status).toBe(201);
    const closes = await api.get(`/projects/${project.id}/merge_requests/${mr.body.iid}/closes_issues`, { token: dev });
    expect(closes.status).toBe(200);
    expect(closes.body.map((i: { title: string }) => i.title)).toEqual(['One', 'Elsewhere']);
    expect(closes.body[0]).not.toHaveProperty('_links');
    expect((await api.get(`/projects/${project.id}/issues/${one}/closed_by`, { token: dev })).body.map((m: { iid: number }) => m.iid)).toEqual([mr.body.iid]);
    expect((await api.get(`/projects/${project.id}/issues/${two}/closed_by`, { token: dev })).body).toEqual([]);
    expect((await api.get(`/projects/${project.id}/issues/${two}/related_merge_requests`, { token: dev })).body.map((m: { iid: number }) => m.iid)).toEqual([mr.body.iid]);
    // MergeRequest#closes_issues: its title closes too; a merge request into another branch than the default closes nothing.
    const second = await api.post(`/projects/${project.id}/repository/commits`, { branch: 'fix2', start_branch: 'master', commit_message: 'Fix 2', actions: [{ action: 'create', file_path: 'g.txt', content: 'g\n' }] }, { token: dev });
    expect(second.status).toBe(201);
    const hidden = await issue(projects.private, { title: 'Hidden', confidential: true }, dev);
    const byTitle = await api.post(
      `/projects/${project.id}/merge_requests`,
      { title: `Resolves #${two}`, source_branch: 'fix2', target_branch: 'master', description: `Also closes ${otherPath}#${hidden}` },
      { token: dev },
    );
    const intoFix = await api.post(`/projects/${project.id}/merge_requests`, { title: 'Into fix', source_branch: 'fix2', target_branch: 'fix', description: `Closes #${two}` }, { token: dev });
    expect([byTitle.status, intoFix.status]).toEqual([201, 201]);
    const closesOf = async (iid: number, token = dev) => (await api.get(`/projects/${project.id}/merge_requests/${iid}/closes_issues`, { token })).body.map((i: { title: string }) => i.title);
    expect(await closesOf(byTitle.body.iid)).toEqual(['Two', 'Hidden']);
    // A reporter here who is a guest there, neither author nor assignee of the confidential issue, is not shown it.
    await addMember(api, 'projects', project.id, author.id, 20);
    expect(await closesOf(byTitle.body.iid, author.token)).toEqual(['Two']);
    expect(await closesOf(intoFix.body.iid)).toEqual([]);
    expect((await api.get(`/projects/${project.id}/issues/${two}/closed_by`, { token: dev })).body.map((m: { iid: number }) => m.iid)).toEqual([byTitle.body.iid]);
    expect((await api.get(`/projects/${project.id}/issues/${two}/related_merge_requests`, { token: dev })).body.map((m: { iid: number }) => m.iid)).toEqual([mr.body.iid, byTitle.body.iid, intoFix.body.iid]);
    const merged = await api.put(`/projects/${project.id}/merge_requests/${mr.body.iid}/merge`, {}, { token: dev });
    expect(merged.status).toBe(200);
    const closed = await eventually(async () => {
      const row = await issueRow(project.id, one);
      return row.state === 'closed' ? row : undefined;
    });
    expect(closed.closed_by_id).toBe(callers.developer.user!.id);
    await eventually(async () => ((await issueRow(projects.private, other)).state === 'closed' ? true : undefined));
    expect((await issueRow(project.id, two)).state).toBe('opened');
  });
});

describe('activity', () => {
  it('opened, closed and reopened issues are project events with target Issue', async () => {
    const iid = await issue(projects.public, { title: 'Feed' }, callers.developer.token);
    const path = `/projects/${projects.public}/issues/${iid}`;
    await api.put(path, { state_event: 'close' }, { token: callers.developer.token });
    await api.put(path, { state_event: 'reopen' }, { token: callers.developer.token });
    const events = (await api.get(`/projects/${projects.public}/events`, { token: callers.developer.token, query: { target_type: 'issue' } })).body;
    expect(events.slice(0, 3).map((e: { action_name: string; target_title: string; target_type: string }) => [e.action_name, e.target_type, e.target_title])).toEqual([
      ['opened', 'Issue', 'Feed'],
      ['closed', 'Issue', 'Feed'],
      ['opened', 'Issue', 'Feed'],
    ]);
  });

  it('a confidential issue\'s events are shown to who may see it only', async () => {
    await issue(projects.public, { title: 'Hushed', confidential: true }, callers.developer.token);
    const titlesFor = async (token: string | null) =>
      (await api.get(`/projects/${projects.public}/events`, { token, query: { target_type: 'issue' } })).body.map((e: { target_title: string }) => e.target_title);
    expect(await titlesFor(callers.reporter.token)).toContain('Hushed');
    expect(await titlesFor(callers.guest.token)).not.toContain('Hushed');
    expect(await titlesFor(null)).not.toContain('Hushed');
    const userFeed = await api.get(`/users/${callers.developer.user!.id}/events`, { token: callers.nonMember.token });
    expect(userFeed.body.map((e: { target_title: string }) => e.target_title)).not.toContain('Hushed');
  });
});

describe('permission matrix', () => {
  const rows: Partial<Record<IssueVisibility, number>> = {};
  permissionMatrix(
    {
      'POST subscribe': { private: { anonymous: 401, nonMember: 404, guest: 201, reporter: 201, admin: 201 }, public: { anonymous: 401, nonMember: 201 } },
      'POST time_estimate': { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 200, admin: 200 }, public: { nonMember: 403, reporter: 200 } },
      'GET time_stats': { private: { anonymous: 404, nonMember: 404, guest: 200 }, public: { anonymous: 200, nonMember: 200 } },
      'GET participants': { private: { anonymous: 404, nonMember: 404, guest: 200 }, public: { anonymous: 200 } },
      'POST todo': { private: { anonymous: 401, nonMember: 404, guest: 201 }, public: { nonMember: 201 } },
    },
    async ({ endpoint, caller, visibility }) => {
      const projectId = projects[visibility as IssueVisibility];
      rows[visibility as IssueVisibility] ??= await issue(projectId, { title: 'Matrix' });
      const [method, tail] = endpoint.split(' ') as ['GET' | 'POST', string];
      const path = `/projects/${projectId}/issues/${rows[visibility as IssueVisibility]}/${tail}`;
      const token = callers[caller as Role].token;
      const res = method === 'GET' ? await api.get(path, { token }) : await api.post(path, tail === 'time_estimate' ? { duration: '1h' } : undefined, { token });
      return res.status;
    },
  );
});
