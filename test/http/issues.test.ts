import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueStreamId } from '../../src/domain/issues/events.js';
import { startIssueWorld, type IssueUser, type IssueVisibility } from '../support/issues.js';
import { permissionMatrix } from '../support/matrix.js';
import type { Callers, Role } from '../support/roles.js';
import { onPlan, type TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
let author: IssueUser;
let assignee: IssueUser;
let projects: Readonly<Record<IssueVisibility, number>>;
let issue: (projectId: number, body?: Record<string, unknown>, token?: string | null) => Promise<number>;

beforeAll(async () => {
  ({ api, callers, author, assignee, projects, issue } = await startIssueWorld());
});
afterAll(() => api.close());

const issueId = async (projectId: number, iid: number) =>
  (await api.runtime.app.db.selectFrom('issues').select('id').where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirstOrThrow()).id;

describe('POST /projects/:id/issues', () => {
  it('creates an issue (201) with Entities::Issue, iids per project, the IssueOpened event', async () => {
    const projectPath = (await api.get(`/projects/${projects.private}`, { token: callers.owner.token })).body.path_with_namespace;
    const res = await api.post(
      `/projects/${projects.private}/issues`,
      { title: 'Crash on start', description: '- [x] one\n- [ ] two', labels: 'bug,ui', assignee_ids: [assignee.id], due_date: '2030-01-02', confidential: true },
      { token: callers.reporter.token },
    );
    expect(res.status).toBe(201);
    const b = res.body;
    expect(Object.keys(b)).toEqual([
      'id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'closed_at', 'closed_by', 'labels', 'milestone', 'assignees', 'author',
      'assignee', 'user_notes_count', 'merge_requests_count', 'upvotes', 'downvotes', 'due_date', 'confidential', 'discussion_locked', 'web_url', 'time_stats',
      'task_completion_status', 'weight', 'has_tasks', 'task_status', '_links', 'references', 'subscribed', 'moved_to_id',
      // EE (ultimate), for who may read the project's group's epics: the issue is in none.
      'epic_iid', 'epic',
    ]);
    expect(b).toMatchObject({
      project_id: projects.private,
      title: 'Crash on start',
      state: 'opened',
      closed_at: null,
      closed_by: null,
      labels: ['bug', 'ui'],
      milestone: null,
      assignees: [{ id: assignee.id, username: assignee.username }],
      assignee: { id: assignee.id },
      author: { id: callers.reporter.user!.id },
      user_notes_count: 0,
      upvotes: 0,
      downvotes: 0,
      due_date: '2030-01-02',
      confidential: true,
      discussion_locked: null,
      web_url: `http://localhost/${projectPath}/-/issues/${b.iid}`.replace('http://localhost', b.web_url.slice(0, b.web_url.indexOf(`/${projectPath}`))),
      time_stats: { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null },
      task_completion_status: { count: 2, completed_count: 1 },
      has_tasks: true,
      task_status: '1 of 2 tasks completed',
      references: { short: `#${b.iid}`, relative: `#${b.iid}`, full: `${projectPath}#${b.iid}` },
      subscribed: true,
      moved_to_id: null,
      epic_iid: null,
      epic: null,
    });
    expect(b._links.self).toMatch(new RegExp(`/api/v4/projects/${projects.private}/issues/${b.iid}$`));
    expect(b._links.notes).toMatch(/\/notes$/);
    expect(b._links.award_emoji).toMatch(/\/award_emoji$/);
    expect(b._links.project).toMatch(new RegExp(`/api/v4/projects/${projects.private}$`));
    const events = await api.events(issueStreamId(b.id));
    expect(events.map((e) => e.type)).toEqual(['IssueOpened']);
    const next = await issue(projects.private);
    expect(next).toBe(b.iid + 1);
    expect(await issue(projects.public)).toBe(1);
  });

  it('drops what a guest may not set (filter_params): assignees, labels, milestone, due date; keeps confidential', async () => {
    const res = await api.post(`/projects/${projects.private}/issues`, { title: 'Guest', labels: 'bug', assignee_ids: [assignee.id], due_date: '2030-01-02', confidential: true }, { token: author.token });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ labels: [], assignees: [], due_date: null, confidential: true, author: { id: author.id } });
  });

  it('takes created_at from an owner or an administrator only; answers 400 for a missing title, a blank one, a bad date', async () => {
    const byOwner = await api.post(`/projects/${projects.private}/issues`, { title: 'Old', created_at: '2019-03-04T05:06:07Z' }, { token: callers.owner.token });
    expect(byOwner.body.created_at).toBe('2019-03-04T05:06:07.000Z');
    const byDeveloper = await api.post(`/projects/${projects.private}/issues`, { title: 'Now', created_at: '2019-03-04T05:06:07Z' }, { token: callers.developer.token });
    expect(byDeveloper.body.created_at).not.toBe('2019-03-04T05:06:07.000Z');
    const missing = await api.post(`/projects/${projects.private}/issues`, {}, { token: callers.developer.token });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'title is missing' });
    const blank = await api.post(`/projects/${projects.private}/issues`, { title: ' ' }, { token: callers.developer.token });
    expect(blank.status).toBe(400);
    expect(blank.body).toEqual({ message: { title: ["can't be blank"] } });
    const badDate = await api.post(`/projects/${projects.private}/issues`, { title: 'x', due_date: 'soon' }, { token: callers.developer.token });
    expect(badDate.status).toBe(400);
    expect(badDate.body).toEqual({ error: 'due_date is invalid' });
  });

  it('keeps one assignee without multiple_issue_assignees (free), several with it, and only users who may read the project', async () => {
    const body = { title: 'Two', assignee_ids: [assignee.id, author.id] };
    const free = await onPlan(api, 'free', () => api.post(`/projects/${projects.private}/issues`, body, { token: callers.developer.token }));
    expect(free.body.assignees.map((u: { id: number }) => u.id)).toEqual([assignee.id]);
    expect(free.body).not.toHaveProperty('weight');
    const starter = await api.post(`/projects/${projects.private}/issues`, { ...body, weight: 3 }, { token: callers.developer.token });
    expect(starter.body.assignees.map((u: { id: number }) => u.id)).toEqual([assignee.id, author.id]);
    expect(starter.body.weight).toBe(3);
    const outsider = await api.post(`/projects/${projects.private}/issues`, { title: 'Out', assignee_id: callers.nonMember.user!.id }, { token: callers.developer.token });
    expect(outsider.body.assignees).toEqual([]);
  });
});

describe('GET /projects/:id/issues/:issue_iid', () => {
  it('answers the issue, 404 "Not found" for another iid', async () => {
    const iid = await issue(projects.public, { title: 'Public one' });
    const res = await api.get(`/projects/${projects.public}/issues/${iid}`, { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ iid, title: 'Public one', subscribed: false });
    const missing = await api.get(`/projects/${projects.public}/issues/9999`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Not found' });
    expect((await api.get(`/projects/${projects.public}/issues/abc`)).body).toEqual({ error: 'issue_iid is invalid' });
  });
});

describe('PUT /projects/:id/issues/:issue_iid', () => {
  it('updates, closes and reopens (closed_by, closed_at), adds and removes labels', async () => {
    const iid = await issue(projects.private, { title: 'To edit', labels: 'a' }, callers.developer.token);
    const path = `/projects/${projects.private}/issues/${iid}`;
    const token = callers.developer.token;
    const edited = await api.put(path, { title: 'Edited', add_labels: 'b,c', remove_labels: 'a', discussion_locked: true }, { token });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ title: 'Edited', labels: ['b', 'c'], discussion_locked: true });
    const closed = await api.put(path, { state_event: 'close' }, { token });
    expect(closed.body).toMatchObject({ state: 'closed', closed_by: { id: callers.developer.user!.id } });
    expect(closed.body.closed_at).not.toBeNull();
    const reopened = await api.put(path, { state_event: 'reopen' }, { token });
    expect(reopened.body).toMatchObject({ state: 'opened', closed_by: null, closed_at: null });
    const types = (await api.events(issueStreamId(await issueId(projects.private, iid)))).map((e) => e.type);
    expect(types).toEqual(['IssueOpened', 'IssueUpdated', 'IssueClosed', 'IssueReopened']);
    const none = await api.put(path, {}, { token });
    expect(none.status).toBe(400);
    expect(none.body.error).toMatch(/are missing, at least one parameter must be provided$/);
  });

  it('counts weight, epic_id and epic_iid among "at least one" in EE only: CE does not declare them (400)', async () => {
    const iid = await issue(projects.private, { title: 'Plans' }, callers.developer.token);
    const path = `/projects/${projects.private}/issues/${iid}`;
    const token = callers.developer.token;
    const ce = 'assignee_id, assignee_ids, confidential, created_at, description, discussion_locked, due_date, labels, add_labels, remove_labels, milestone_id, state_event, title';
    for (const body of [{ epic_id: 0 }, { epic_iid: 1 }, { weight: 2 }]) {
      const free = await onPlan(api, 'free', () => api.put(path, body, { token }));
      expect(free).toMatchObject({ status: 400, body: { error: `${ce} are missing, at least one parameter must be provided` } });
    }
    expect(await onPlan(api, 'free', () => api.put(path, { title: 'Plans on free', epic_id: 0 }, { token }))).toMatchObject({ status: 200, body: { title: 'Plans on free' } });
    expect(await api.put(path, { epic_id: 0 }, { token })).toMatchObject({ status: 200, body: { iid, epic_iid: null } });
    expect(await api.put(path, { weight: 2 }, { token })).toMatchObject({ status: 200, body: { weight: 2 } });
    expect(await api.put(path, {}, { token })).toMatchObject({ status: 400, body: { error: `${ce}, weight, epic_id, epic_iid are missing, at least one parameter must be provided` } });
  });

  it('lets the author (a guest) edit their own issue, not another one (403); updated_at for owners only', async () => {
    const own = await issue(projects.private, { title: 'Mine' });
    expect((await api.put(`/projects/${projects.private}/issues/${own}`, { title: 'Mine too' }, { token: author.token })).status).toBe(200);
    const other = await issue(projects.private, { title: 'Theirs' }, callers.developer.token);
    expect((await api.put(`/projects/${projects.private}/issues/${other}`, { title: 'x' }, { token: author.token })).status).toBe(403);
    const dated = await api.put(`/projects/${projects.private}/issues/${other}`, { title: 'Dated', updated_at: '2021-01-01T00:00:00Z' }, { token: callers.owner.token });
    expect(dated.body.updated_at).toBe('2021-01-01T00:00:00.000Z');
  });
});

describe('DELETE /projects/:id/issues/:issue_iid', () => {
  it('deletes for owners (204, then 404 "Issue Not Found"); 403 for a maintainer', async () => {
    const iid = await issue(projects.private);
    const path = `/projects/${projects.private}/issues/${iid}`;
    expect((await api.del(path, { token: callers.maintainer.token })).status).toBe(403);
    expect((await api.del(path, { token: callers.owner.token })).status).toBe(204);
    const again = await api.del(path, { token: callers.owner.token });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Issue Not Found' });
  });
});

describe('confidential issues', () => {
  const ROLES: Role[] = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
  it.each(['private', 'internal', 'public'] as const)('on a %s project: the author, assignees, reporters and up and admins see it; others get 404', async (visibility) => {
    const projectId = projects[visibility];
    const iid = await issue(projectId, { title: 'Secret', confidential: true });
    const path = `/projects/${projectId}/issues/${iid}`;
    const statuses = Object.fromEntries(await Promise.all(ROLES.map(async (role) => [role, (await api.get(path, { token: callers[role].token })).status])));
    const hidden = visibility === 'private' ? 404 : 404;
    expect(statuses).toEqual({ anonymous: 404, nonMember: hidden, guest: 404, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 });
    expect((await api.get(path, { token: author.token })).status).toBe(200);
    expect((await api.put(path, { title: 'x' }, { token: callers.guest.token })).status).toBe(404);
  });
});

const matrixIssues: Partial<Record<IssueVisibility, number>> = {};
const call = async (endpoint: string, role: Role, visibility: IssueVisibility) => {
  const projectId = projects[visibility];
  matrixIssues[visibility] ??= await issue(projectId, { title: 'Matrix' });
  const path = `/projects/${projectId}/issues/${matrixIssues[visibility]}`;
  const token = callers[role].token;
  switch (endpoint) {
    case 'GET /projects/:id/issues/:issue_iid':
      return (await api.get(path, { token })).status;
    case 'POST /projects/:id/issues':
      return (await api.post(`/projects/${projectId}/issues`, { title: 'By matrix' }, { token })).status;
    case 'PUT /projects/:id/issues/:issue_iid':
      return (await api.put(path, { description: `by ${role}` }, { token })).status;
    default: {
      const victim = await issue(projectId, { title: 'Victim' });
      return (await api.del(`/projects/${projectId}/issues/${victim}`, { token })).status;
    }
  }
};

describe('permission matrix', () => {
  permissionMatrix(
    {
      'GET /projects/:id/issues/:issue_iid': {
        private: { anonymous: 404, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 },
        internal: { anonymous: 404, nonMember: 200, guest: 200, admin: 200 },
        public: { anonymous: 200, nonMember: 200, guest: 200, admin: 200 },
      },
      'POST /projects/:id/issues': {
        private: { anonymous: 401, nonMember: 404, guest: 201, reporter: 201, owner: 201, admin: 201 },
        internal: { nonMember: 201 },
        public: { anonymous: 401, nonMember: 201 },
      },
      'PUT /projects/:id/issues/:issue_iid': {
        private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 },
        public: { nonMember: 403, guest: 403, reporter: 200 },
      },
      'DELETE /projects/:id/issues/:issue_iid': {
        private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 204, admin: 204 },
        public: { nonMember: 403, owner: 204 },
      },
    },
    ({ endpoint, caller, visibility }) => call(endpoint, caller as Role, visibility as IssueVisibility),
  );
});

describe('the issues feature', () => {
  it('disabled: the issue is 404, creating 403; private: members only', async () => {
    const iid = await issue(projects.public, { title: 'Feature' });
    const path = `/projects/${projects.public}/issues/${iid}`;
    expect((await api.put(`/projects/${projects.public}`, { issues_access_level: 'disabled' }, { token: callers.owner.token })).status).toBe(200);
    expect((await api.get(path, { token: callers.developer.token })).status).toBe(404);
    expect((await api.post(`/projects/${projects.public}/issues`, { title: 'x' }, { token: callers.developer.token })).status).toBe(403);
    expect((await api.get(`/projects/${projects.public}/issues`, { token: callers.developer.token })).body).toEqual([]);
    expect((await api.put(`/projects/${projects.public}`, { issues_access_level: 'private' }, { token: callers.owner.token })).status).toBe(200);
    expect((await api.get(path, { token: callers.guest.token })).status).toBe(200);
    expect((await api.get(path, { token: callers.nonMember.token })).status).toBe(404);
    expect((await api.get(path, { token: null })).status).toBe(404);
    expect((await api.put(`/projects/${projects.public}`, { issues_access_level: 'enabled' }, { token: callers.owner.token })).status).toBe(200);
  });
});
