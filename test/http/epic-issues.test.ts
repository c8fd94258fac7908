import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remainingDaysInWords } from '../../src/http/entities/epics.js';
import { createGroup, createProject, settled, type GroupFixture } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, grantRoles, type Callers, type Role } from '../support/roles.js';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
beforeAll(async () => {
  api = await startTestServer();
  callers = await createCallers(api);
  await settled(api);
});
afterAll(() => api.close());

const epicsUrl = (groupId: number) => `/groups/${groupId}/epics`;
const issuesUrl = (groupId: number, epicIid: number) => `${epicsUrl(groupId)}/${epicIid}/issues`;
const newEpic = async (groupId: number, body: Record<string, unknown> = {}) => {
  const res = await api.post(epicsUrl(groupId), { title: 'An epic', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; iid: number; group_id: number };
};
const newIssue = async (projectId: number, body: Record<string, unknown> = {}) => {
  const res = await api.post(`/projects/${projectId}/issues`, { title: 'An issue', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; iid: number; project_id: number };
};
const add = (groupId: number, epicIid: number, issueId: number | string, token?: string | null) =>
  api.post(`${issuesUrl(groupId, epicIid)}/${issueId}`, undefined, token === undefined ? {} : { token });
const linkRows = async (epicId: number) =>
  (await sql<{ id: number; issue_id: number; relative_position: number }>`select id, issue_id, relative_position from epic_issues where epic_id = ${epicId} order by relative_position, id`.execute(api.handle.db)).rows;

/** A group with a project in it, and a subgroup with a project of its own. */
async function hierarchy(visibility: 'private' | 'public' = 'private') {
  const group = await createGroup(api, { visibility });
  const project = await createProject(api, { group, visibility });
  const sub = await createGroup(api, { parent: group, visibility });
  const subProject = await createProject(api, { group: sub, visibility });
  return { group, project, sub, subProject };
}

const ISSUE_BASIC_KEYS = ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'closed_at', 'closed_by', 'labels', 'milestone', 'assignees', 'author', 'assignee', 'user_notes_count', 'merge_requests_count', 'upvotes', 'downvotes', 'due_date', 'confidential', 'discussion_locked', 'web_url', 'time_stats', 'task_completion_status', 'weight'];
const ISSUE_KEYS = [...ISSUE_BASIC_KEYS, 'has_tasks', '_links', 'references', 'subscribed', 'moved_to_id', 'epic_iid', 'epic'];
const EPIC_KEYS = ['id', 'iid', 'group_id', 'parent_id', 'title', 'description', 'author', 'start_date', 'end_date', 'due_date', 'state', 'web_url', 'references', 'reference', 'created_at', 'updated_at', 'closed_at', 'labels', 'upvotes', 'downvotes'];

describe('POST /groups/:id/epics/:epic_iid/issues/:issue_id', () => {
  it('puts the issue in the epic and answers Entities::EpicIssueLink; IssueAddedToEpic on the issue', async () => {
    const { group, project, subProject } = await hierarchy();
    const epic = await newEpic(group.id);
    const issue = await newIssue(subProject.id, { title: 'Deep' });
    const res = await add(group.id, epic.iid, issue.id);
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body)).toEqual(['id', 'relative_position', 'epic', 'issue']);
    expect(Object.keys(res.body.epic)).toEqual(EPIC_KEYS);
    expect(Object.keys(res.body.issue)).toEqual(ISSUE_BASIC_KEYS);
    expect(res.body).toMatchObject({ id: expect.any(Number), relative_position: 1_073_741_323, epic: { id: epic.id, iid: epic.iid, reference: `&${epic.iid}` }, issue: { id: issue.id, title: 'Deep' } });
    expect((await api.events(`issue-${issue.id}`)).map((e) => e.type)).toEqual(['IssueOpened', 'IssueAddedToEpic']);
    expect((await api.events(`issue-${issue.id}`))[1]!.data).toEqual({
      id: issue.id, project_id: subProject.id, iid: issue.iid, epic_issue_id: res.body.id, epic_id: epic.id, epic_group_id: group.id, relative_position: 1_073_741_323, previous_epic_id: null,
    });
    // A second issue goes first (move_to_start).
    const second = await add(group.id, epic.iid, (await newIssue(project.id)).id);
    expect(second.body.relative_position).toBe(1_073_740_823);
  });

  it('answers 409 for an issue already in the epic, and moves one from another epic, keeping its link', async () => {
    const { group, project } = await hierarchy();
    const [a, b] = [await newEpic(group.id), await newEpic(group.id)];
    const issue = await newIssue(project.id);
    const first = (await add(group.id, a.iid, issue.id)).body;
    expect(await add(group.id, a.iid, issue.id)).toMatchObject({ status: 409, body: { message: 'Issue(s) already assigned' } });
    const moved = await add(group.id, b.iid, issue.id);
    expect(moved.status).toBe(201);
    expect(moved.body).toMatchObject({ id: first.id, epic: { id: b.id } });
    expect(await linkRows(a.id)).toEqual([]);
    expect((await linkRows(b.id)).map((r) => r.id)).toEqual([first.id]);
    expect((await api.events(`issue-${issue.id}`)).at(-1)).toMatchObject({ type: 'IssueAddedToEpic', data: { epic_issue_id: first.id, epic_id: b.id, previous_epic_id: a.id } });
  });

  it('refuses an issue outside the group and its subgroups, a missing issue, and issue_id in the body', async () => {
    const { group, sub, project } = await hierarchy();
    const elsewhere = await newIssue((await createProject(api)).id);
    const subEpic = await newEpic(sub.id);
    const epic = await newEpic(group.id);
    const notFoundBody = { message: 'No Issue found for given params' };
    expect(await add(group.id, epic.iid, elsewhere.id)).toMatchObject({ status: 404, body: notFoundBody });
    // A subgroup's epic takes no issue of the parent group's projects.
    expect(await add(sub.id, subEpic.iid, (await newIssue(project.id)).id)).toMatchObject({ status: 404, body: notFoundBody });
    expect(await add(group.id, epic.iid, 999_999_999)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await add(group.id, epic.iid, 'abc')).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    const inBody = await api.post(issuesUrl(group.id, epic.iid), { issue_id: (await newIssue(project.id)).id });
    expect(inBody).toMatchObject({ status: 404, body: { error: '404 Not Found' } });
    expect(await linkRows(epic.id)).toEqual([]);
    // A missing epic is 403, as GitLab asks admin_epic of nil.
    expect(await add(group.id, 999, (await newIssue(project.id)).id)).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect(await api.post(`${issuesUrl(group.id, 0)}x/1`)).toMatchObject({ status: 404 });
  });

  it('is 403 below ultimate, and answers under /groups/:id/-/epics too', async () => {
    const { group, project } = await hierarchy();
    const epic = await newEpic(group.id);
    const issue = await newIssue(project.id);
    expect(await onPlan(api, 'premium', () => add(group.id, epic.iid, issue.id))).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect(await onPlan(api, 'premium', () => api.get(issuesUrl(group.id, epic.iid)))).toMatchObject({ status: 403 });
    const dashed = await api.post(`/groups/${group.id}/-/epics/${epic.iid}/issues/${issue.id}`);
    expect(dashed.status, dashed.text).toBe(201);
    expect((await api.get(`/groups/${group.id}/-/epics/${epic.iid}/issues`)).body.map((i: any) => i.id)).toEqual([issue.id]);
  });
});

describe('GET /groups/:id/epics/:epic_iid/issues', () => {
  it('lists the epic issues as Entities::EpicIssue by relative position, only those the caller may read', async () => {
    const group = await createGroup(api, { visibility: 'public' });
    await grantRoles(api, callers, { groups: group.id });
    const project = await createProject(api, { group, visibility: 'public' });
    const epic = await newEpic(group.id, { title: 'Big' });
    const [one, two, secret] = [await newIssue(project.id, { title: 'one' }), await newIssue(project.id, { title: 'two' }), await newIssue(project.id, { title: 'secret', confidential: true })];
    for (const issue of [one, two, secret]) expect((await add(group.id, epic.iid, issue.id)).status).toBe(201);
    const asReporter = await api.get(issuesUrl(group.id, epic.iid), { token: callers.reporter.token });
    expect(asReporter.status).toBe(200);
    expect(asReporter.body.map((i: any) => i.title)).toEqual(['secret', 'two', 'one']);
    expect(Object.keys(asReporter.body[0])).toEqual([...ISSUE_KEYS, 'epic_issue_id', 'relative_position']);
    const rows = await linkRows(epic.id);
    expect(asReporter.body.map((i: any) => [i.epic_issue_id, i.relative_position])).toEqual(rows.map((r) => [r.id, r.relative_position]));
    expect(asReporter.body[0]).toMatchObject({
      subscribed: false,
      references: { short: `#${secret.iid}`, relative: `#${secret.iid}` },
      epic_iid: epic.iid,
      epic: { id: epic.id, iid: epic.iid, title: 'Big', url: `/groups/${group.full_path}/-/epics/${epic.iid}`, group_id: group.id },
    });
    const asGuest = await api.get(issuesUrl(group.id, epic.iid), { token: callers.guest.token });
    expect(asGuest.body.map((i: any) => i.title)).toEqual(['two', 'one']);
    expect((await api.get(issuesUrl(group.id, epic.iid), { token: callers.nonMember.token })).body.map((i: any) => i.title)).toEqual(['two', 'one']);
  });

  it('drops the links with the issue, and with the epic (IssueRemovedFromEpic on its issues)', async () => {
    const { group, project } = await hierarchy();
    const epic = await newEpic(group.id);
    const [a, b] = [await newIssue(project.id), await newIssue(project.id)];
    await add(group.id, epic.iid, a.id);
    await add(group.id, epic.iid, b.id);
    expect((await api.del(`/projects/${project.id}/issues/${a.iid}`)).status).toBe(204);
    expect((await api.get(issuesUrl(group.id, epic.iid))).body.map((i: any) => i.id)).toEqual([b.id]);
    expect((await api.del(`${epicsUrl(group.id)}/${epic.iid}`)).status).toBe(204);
    expect(await linkRows(epic.id)).toEqual([]);
    expect((await api.events(`issue-${b.id}`)).map((e) => e.type)).toEqual(['IssueOpened', 'IssueAddedToEpic', 'IssueRemovedFromEpic']);
    expect((await api.get(`/projects/${project.id}/issues/${b.iid}`)).body).toMatchObject({ epic_iid: null, epic: null });
  });
});

describe('PUT /groups/:id/epics/:epic_iid/issues/:epic_issue_id', () => {
  it('moves a link between others (move_before_id above it, move_after_id below it) and answers the list', async () => {
    const { group, project } = await hierarchy();
    const epic = await newEpic(group.id);
    const issues = [await newIssue(project.id, { title: 'a' }), await newIssue(project.id, { title: 'b' }), await newIssue(project.id, { title: 'c' })];
    for (const issue of issues) await add(group.id, epic.iid, issue.id);
    const [c, b, a] = await linkRows(epic.id); // newest first: c, b, a
    const titles = (res: { body: any[] }) => res.body.map((i) => i.title);
    // c below a.
    const down = await api.put(`${issuesUrl(group.id, epic.iid)}/${c!.id}`, { move_before_id: a!.id });
    expect(down.status, down.text).toBe(200);
    expect(titles(down)).toEqual(['b', 'a', 'c']);
    // c back between b and a.
    expect(titles(await api.put(`${issuesUrl(group.id, epic.iid)}/${c!.id}`, { move_before_id: b!.id, move_after_id: a!.id }))).toEqual(['b', 'c', 'a']);
    // a above b.
    expect(titles(await api.put(`${issuesUrl(group.id, epic.iid)}/${a!.id}`, { move_after_id: b!.id }))).toEqual(['a', 'b', 'c']);
    expect((await api.events(`issue-${issues[0]!.id}`)).at(-1)).toMatchObject({ type: 'IssueEpicPositionChanged', data: { epic_issue_id: a!.id, epic_id: epic.id } });
    // Neither neighbour: nothing moves.
    expect(titles(await api.put(`${issuesUrl(group.id, epic.iid)}/${a!.id}`, {}))).toEqual(['a', 'b', 'c']);
  });

  it('spreads the links out when no position is left between two of them', async () => {
    const { group, project } = await hierarchy();
    const epic = await newEpic(group.id);
    const issues = [await newIssue(project.id, { title: 'x' }), await newIssue(project.id, { title: 'y' }), await newIssue(project.id, { title: 'z' })];
    for (const issue of issues) await add(group.id, epic.iid, issue.id);
    const [z, y] = await linkRows(epic.id);
    // Move x and z alternately between z/y and the other: the gap halves each time.
    let order: string[] = [];
    for (let i = 0; i < 12; i++) {
      const rows = await linkRows(epic.id);
      const [first, second] = [rows[0]!, rows[1]!];
      const res = await api.put(`${issuesUrl(group.id, epic.iid)}/${rows[2]!.id}`, { move_before_id: first.id, move_after_id: second.id });
      expect(res.status).toBe(200);
      order = res.body.map((i: any) => i.title);
    }
    expect(order).toHaveLength(3);
    const positions = (await linkRows(epic.id)).map((r) => r.relative_position);
    expect(new Set(positions).size).toBe(3);
    expect([z!.id, y!.id].every((id) => id > 0)).toBe(true);
  });

  it('answers 404 for a link of another epic and for a neighbour not in the epic', async () => {
    const { group, project } = await hierarchy();
    const [a, b] = [await newEpic(group.id), await newEpic(group.id)];
    const link = (await add(group.id, a.iid, (await newIssue(project.id)).id)).body;
    const other = (await add(group.id, b.iid, (await newIssue(project.id)).id)).body;
    expect(await api.put(`${issuesUrl(group.id, b.iid)}/${link.id}`, { move_after_id: other.id })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.put(`${issuesUrl(group.id, a.iid)}/${link.id}`, { move_after_id: other.id })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.put(`${issuesUrl(group.id, a.iid)}/${link.id}`, { move_after_id: 'x' })).toMatchObject({ status: 400, body: { error: 'move_after_id is invalid' } });
  });
});

describe('DELETE /groups/:id/epics/:epic_iid/issues/:epic_issue_id', () => {
  it('writes EE\'s system notes on the issue: added to, changed, removed from epic (by the epic\'s group path from a subgroup\'s project)', async () => {
    const { group, project, subProject } = await hierarchy();
    const [a, b] = [await newEpic(group.id), await newEpic(group.id)];
    const issue = await newIssue(project.id);
    const deep = await newIssue(subProject.id);
    const link = (await add(group.id, a.iid, issue.id)).body;
    await add(group.id, b.iid, issue.id);
    await api.del(`${issuesUrl(group.id, b.iid)}/${link.id}`);
    await add(group.id, a.iid, deep.id);
    const systemNotes = async (projectId: number, iid: number) => ((await api.get(`/projects/${projectId}/issues/${iid}/notes`, { query: { sort: 'asc' } })).body as { body: string; system: boolean }[]).filter((n) => n.system).map((n) => n.body);
    expect(await systemNotes(project.id, issue.iid)).toEqual([`added to epic &${a.iid}`, `changed epic to &${b.iid}`, `removed from epic &${b.iid}`]);
    expect(await systemNotes(subProject.id, deep.iid)).toEqual([`added to epic ${group.full_path}&${a.iid}`]);
    // …and on the epics (the notes API finds an epic by id): the issue by its project's path in the group, else its full path.
    const epicNotes = async (epicId: number) => ((await api.get(`/groups/${group.id}/epics/${epicId}/notes`, { query: { sort: 'asc' } })).body as { body: string; system: boolean; noteable_iid: unknown }[]).filter((n) => n.system);
    const ref = `${project.path}#${issue.iid}`;
    expect((await epicNotes(a.id)).map((n) => n.body)).toEqual([`added issue ${ref}`, `moved issue ${ref} to epic &${b.iid}`, `added issue ${subProject.path_with_namespace}#${deep.iid}`]);
    expect((await epicNotes(b.id)).map((n) => n.body)).toEqual([`added issue ${ref} from epic &${a.iid}`, `removed issue ${ref}`]);
    expect((await epicNotes(a.id))[0]).toMatchObject({ noteable_iid: null });
  });

  it('takes the issue out, answers the link as it was; IssueRemovedFromEpic; then 404', async () => {
    const { group, project } = await hierarchy();
    const epic = await newEpic(group.id);
    const issue = await newIssue(project.id);
    const link = (await add(group.id, epic.iid, issue.id)).body;
    const res = await api.del(`${issuesUrl(group.id, epic.iid)}/${link.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual(link);
    expect(await linkRows(epic.id)).toEqual([]);
    expect((await api.events(`issue-${issue.id}`)).at(-1)).toMatchObject({ type: 'IssueRemovedFromEpic', data: { epic_issue_id: link.id, epic_id: epic.id } });
    expect(await api.del(`${issuesUrl(group.id, epic.iid)}/${link.id}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    // Back in, a new link.
    expect((await add(group.id, epic.iid, issue.id)).body.id).not.toBe(link.id);
  });
});

describe('the permission matrix', () => {
  const groups = new Map<string, GroupFixture>();
  const projects = new Map<string, number>();
  beforeAll(async () => {
    for (const visibility of ['private', 'public'] as const) {
      const group = await createGroup(api, { visibility, token: callers.owner.token! });
      await grantRoles(api, callers, { groups: group.id });
      groups.set(visibility, group);
      projects.set(visibility, (await createProject(api, { group, visibility })).id);
    }
  });
  // GitLab: authenticate! (401), the group (404 hidden), read_epic for the list, admin_epic (reporters) for the rest, 403 otherwise.
  const table = (ok: number): Record<'private' | 'public', Partial<Record<Role, number>>> => ({
    private: { anonymous: 401, nonMember: 404, external: 404, guest: 403, reporter: ok, developer: ok, maintainer: ok, owner: ok, admin: ok, blocked: 403 },
    public: { anonymous: 401, nonMember: 403, external: 403, guest: 403, reporter: ok, developer: ok, maintainer: ok, owner: ok, admin: ok },
  });
  const MATRIX: MatrixTable<Role, 'private' | 'public'> = {
    'GET /groups/:id/epics/:epic_iid/issues': {
      private: { anonymous: 401, nonMember: 404, external: 404, guest: 200, reporter: 200, owner: 200, admin: 200, blocked: 403 },
      public: { anonymous: 401, nonMember: 200, external: 200, guest: 200, admin: 200 },
    },
    'POST /groups/:id/epics/:epic_iid/issues/:issue_id': table(201),
    'PUT /groups/:id/epics/:epic_iid/issues/:epic_issue_id': table(200),
    'DELETE /groups/:id/epics/:epic_iid/issues/:epic_issue_id': table(200),
  };
  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const group = groups.get(visibility)!;
    const epic = await newEpic(group.id);
    const issue = await newIssue(projects.get(visibility)!);
    const link = method === 'POST' ? null : (await add(group.id, epic.iid, issue.id)).body;
    const url = path
      .replace(':id', String(group.id))
      .replace(':epic_iid', String(epic.iid))
      .replace(':issue_id', String(issue.id))
      .replace(':epic_issue_id', String(link?.id));
    const res = await api.request(method, url, { token: callers[caller].token });
    if (res.status === 404) expect(res.body).toEqual({ message: '404 Group Not Found' });
    return res.status;
  });
});

describe('epic_id and epic_iid on POST and PUT /projects/:id/issues', () => {
  it('creates an issue in an epic (by id or by iid), shows epic_iid and epic, and moves or removes it on update', async () => {
    const { group, project } = await hierarchy();
    const [a, b] = [await newEpic(group.id, { title: 'A', due_date_is_fixed: true, due_date_fixed: '2001-01-05' }), await newEpic(group.id, { title: 'B' })];
    const created = await api.post(`/projects/${project.id}/issues`, { title: 'In A', epic_id: a.id });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      epic_iid: a.iid,
      epic: { id: a.id, iid: a.iid, title: 'A', url: `/groups/${group.full_path}/-/epics/${a.iid}`, group_id: group.id, human_readable_end_date: 'Jan 05, 2001', human_readable_timestamp: '<strong>Past due</strong>' },
    });
    expect(Object.keys(created.body).slice(-2)).toEqual(['epic_iid', 'epic']);
    expect((await api.events(`issue-${created.body.id}`)).map((e) => e.type)).toEqual(['IssueOpened', 'IssueAddedToEpic']);
    expect((await api.post(`/projects/${project.id}/issues`, { title: 'In B', epic_iid: b.iid })).body).toMatchObject({ epic_iid: b.iid, epic: { id: b.id } });
    const url = `/projects/${project.id}/issues/${created.body.iid}`;
    expect((await api.put(url, { epic_iid: b.iid })).body).toMatchObject({ epic_iid: b.iid, epic: { id: b.id, title: 'B' } });
    expect((await api.put(url, { epic_iid: b.iid })).status).toBe(200);
    expect((await api.put(url, { epic_id: 0 })).body).toMatchObject({ epic_iid: null, epic: null });
    expect((await api.events(`issue-${created.body.id}`)).map((e) => e.type)).toEqual(['IssueOpened', 'IssueAddedToEpic', 'IssueAddedToEpic', 'IssueRemovedFromEpic']);
    // Lists show them too.
    const listed = (await api.get(`/projects/${project.id}/issues`)).body as any[];
    expect(listed.find((i) => i.title === 'In B')).toMatchObject({ epic_iid: b.iid });
  });

  it("answers GitLab's errors: both given, an unknown iid or id, an epic the caller may not administer", async () => {
    const { group, project } = await hierarchy('public');
    const epic = await newEpic(group.id);
    const issues = `/projects/${project.id}/issues`;
    expect(await api.post(issues, { title: 'x', epic_id: epic.id, epic_iid: epic.iid })).toMatchObject({ status: 400, body: { error: 'epic_id, epic_iid are mutually exclusive' } });
    expect(await api.post(issues, { title: 'x', epic_iid: 999 })).toMatchObject({ status: 404, body: { message: '404 Epic Not Found' } });
    expect(await api.post(issues, { title: 'x', epic_id: 999_999 })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    // A user who may open issues in the public project but not administer the group's epics.
    expect(await api.post(issues, { title: 'x', epic_id: epic.id }, { token: callers.nonMember.token })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect(await linkRows(epic.id)).toEqual([]);
    // Outside any group, an epic id takes the issue out of nothing.
    const personal = await createProject(api);
    const res = await api.post(`/projects/${personal.id}/issues`, { title: 'x', epic_id: epic.id });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('epic_iid');
  });

  it('leaves epic_iid and epic out for whoever may not read the group, and below ultimate', async () => {
    const { group, project } = await hierarchy();
    await createGroup(api);
    const epic = await newEpic(group.id);
    const issue = await newIssue(project.id, { epic_id: epic.id });
    expect((await onPlan(api, 'premium', () => api.get(`/projects/${project.id}/issues/${issue.iid}`))).body).not.toHaveProperty('epic');
    expect(await linkRows(epic.id)).toHaveLength(1);
  });

  it('answers epic_id and epic_iid below ultimate as EE does: no epic is found; GitLab CE (free) ignores them', async () => {
    const { group, project } = await hierarchy();
    const epic = await newEpic(group.id);
    const issues = `/projects/${project.id}/issues`;
    const inside = await newIssue(project.id, { epic_id: epic.id });
    expect(await onPlan(api, 'premium', () => api.post(issues, { title: 'y', epic_id: epic.id }))).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await onPlan(api, 'starter', () => api.post(issues, { title: 'y', epic_iid: epic.iid }))).toMatchObject({ status: 404, body: { message: '404 Epic Not Found' } });
    // epic_id=0 takes nothing out below ultimate (EpicIssues::DestroyService is refused).
    expect((await onPlan(api, 'premium', () => api.put(`${issues}/${inside.iid}`, { epic_id: 0 }))).status).toBe(200);
    expect(await onPlan(api, 'free', () => api.post(issues, { title: 'z', epic_id: epic.id }))).toMatchObject({ status: 201 });
    expect((await linkRows(epic.id)).map((r) => r.issue_id)).toEqual([inside.id]);
  });
});

describe('iid on POST /projects/:id/issues', () => {
  it('takes the iid an owner or administrator gives, ignores a developer\'s, and answers 409 Duplicated issue for a taken one', async () => {
    const group = await createGroup(api, { token: callers.owner.token! });
    await grantRoles(api, callers, { groups: group.id });
    const project = await createProject(api, { group });
    const issues = `/projects/${project.id}/issues`;
    expect((await api.post(issues, { title: 'root', iid: 40 })).body.iid).toBe(40);
    expect((await api.post(issues, { title: 'owner', iid: 7 }, { token: callers.owner.token })).body.iid).toBe(7);
    expect((await api.post(issues, { title: 'developer', iid: 90 }, { token: callers.developer.token })).body.iid).toBe(41);
    expect(await api.post(issues, { title: 'again', iid: 40 })).toMatchObject({ status: 409, body: { message: 'Duplicated issue' } });
    expect((await api.post(issues, { title: 'next' })).body.iid).toBe(42);
    expect(await api.post(issues, { title: 'x', iid: 'seven' })).toMatchObject({ status: 400, body: { error: 'iid is invalid' } });
  });
});

describe('remaining days in words (EntityDateHelper, GitLab 12.10)', () => {
  it('says past due, today, upcoming, remaining and elapsed as GitLab does', () => {
    const today = '2020-06-10';
    expect(remainingDaysInWords('2020-06-01', null, today)).toBe('<strong>Past due</strong>');
    expect(remainingDaysInWords('2020-06-10', '2020-07-01', today)).toBe('<strong>Today</strong>');
    expect(remainingDaysInWords(null, '2020-07-01', today)).toBe('<strong>Upcoming</strong>');
    expect(remainingDaysInWords('2020-06-11', null, today)).toBe('<strong>1</strong> day remaining');
    expect(remainingDaysInWords('2020-06-15', null, today)).toBe('<strong>5</strong> days remaining');
    expect(remainingDaysInWords('2020-07-15', null, today)).toBe('<strong>1</strong> month remaining');
    expect(remainingDaysInWords('2020-07-25', null, today)).toBe('<strong>2</strong> months remaining');
    expect(remainingDaysInWords('2020-10-10', null, today)).toBe('<strong>4</strong> months remaining');
    expect(remainingDaysInWords('2022-06-10', null, today)).toBe('<strong>2</strong> years remaining');
    expect(remainingDaysInWords('2021-12-10', null, today)).toBe('over <strong>1</strong> year remaining');
    expect(remainingDaysInWords(null, '2020-06-09', today)).toBe('<strong>1</strong> day elapsed');
    expect(remainingDaysInWords(null, '2020-06-10', today)).toBeNull();
  });
});

describe('POST /projects/:id/issues/:issue_iid/move with an issue in an epic (EE)', () => {
  const move = (issue: { project_id: number; iid: number }, toProjectId: number, token?: string | null) =>
    api.post(`/projects/${issue.project_id}/issues/${issue.iid}/move`, { to_project_id: toProjectId }, token === undefined ? {} : { token });
  const epicNotes = async (epic: { id: number; group_id: number }) => (await api.get(`/groups/${epic.group_id}/epics/${epic.id}/notes`, { query: { sort: 'asc' } })).body;

  it('gives the new issue the original one\'s link, its id and place kept, with no note', async () => {
    const { group, project, subProject } = await hierarchy();
    const epic = await newEpic(group.id);
    const before = await newIssue(project.id, { title: 'Stays' });
    const issue = await newIssue(project.id, { title: 'Moves' });
    for (const i of [before, issue]) expect((await add(group.id, epic.iid, i.id)).status).toBe(201);
    const links = await linkRows(epic.id);
    const notesBefore = await epicNotes(epic);
    expect(notesBefore.map((n: { body: string }) => n.body)).toEqual([`added issue ${project.path}#${before.iid}`, `added issue ${project.path}#${issue.iid}`]);

    const res = await move(issue, subProject.id);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ project_id: subProject.id, epic_iid: epic.iid, epic: { id: epic.id, iid: epic.iid } });
    const moved = res.body as { id: number; iid: number };
    expect((await api.get(`/projects/${subProject.id}/issues/${moved.iid}`)).body).toMatchObject({ epic_iid: epic.iid, epic: { id: epic.id } });
    expect((await api.get(`/projects/${project.id}/issues/${issue.iid}`)).body).toMatchObject({ moved_to_id: moved.id, epic_iid: null, epic: null });
    expect(await linkRows(epic.id)).toEqual(links.map((l) => (l.issue_id === issue.id ? { ...l, issue_id: moved.id } : l)));
    const listed = (await api.get(issuesUrl(group.id, epic.iid))).body as { id: number; epic_issue_id: number; relative_position: number }[];
    expect(listed.map((i) => [i.id, i.epic_issue_id, i.relative_position])).toEqual(links.map((l) => [l.issue_id === issue.id ? moved.id : l.issue_id, l.id, l.relative_position]));
    expect((await api.events(`issue-${issue.id}`)).map((e) => e.type)).toEqual(['IssueOpened', 'IssueAddedToEpic', 'IssueEpicLinkPassedOn', 'IssueClosed', 'IssueMoved']);
    expect((await api.events(`issue-${moved.id}`)).map((e) => e.type)).toEqual(['IssueOpened', 'IssueEpicLinkInherited']);
    // EE writes no note about the epic: neither on the epic nor on the issues.
    expect(await epicNotes(epic)).toEqual(notesBefore);
    const systemNotes = async (projectId: number, iid: number) =>
      ((await api.get(`/projects/${projectId}/issues/${iid}/notes`, { query: { sort: 'asc' } })).body as { body: string; system: boolean }[]).filter((n) => n.system).map((n) => n.body);
    // The new issue has the original's notes copied (Issues::MoveService), then its own.
    expect(await systemNotes(subProject.id, moved.iid)).toEqual([`added to epic &${epic.iid}`, `moved from ${project.path_with_namespace}#${issue.iid}`]);
    expect(await systemNotes(project.id, issue.iid)).toEqual([`added to epic &${epic.iid}`, 'closed', `moved to ${subProject.path_with_namespace}#${moved.iid}`]);

    // The new issue is the epic's now: it leaves it, the closed original may go in again.
    const link = listed.find((i) => i.id === moved.id)!.epic_issue_id;
    expect((await api.del(`${issuesUrl(group.id, epic.iid)}/${link}`)).status).toBe(200);
    expect((await add(group.id, epic.iid, issue.id)).status).toBe(201);
    expect((await linkRows(epic.id)).map((l) => l.issue_id).sort()).toEqual([before.id, issue.id].sort());
  });

  it('leaves the link with the original when the mover may not update the epic, or below ultimate', async () => {
    const { group, project } = await hierarchy();
    const other = await createProject(api, { group, visibility: 'private' });
    // Maintainers of both projects, not members of the group: admin_issue on both, no update_epic.
    for (const p of [project, other]) await grantRoles(api, callers, { projects: p.id });
    const epic = await newEpic(group.id);
    const issue = await newIssue(project.id, { epic_id: epic.id });
    const res = await move(issue, other.id, callers.maintainer.token);
    expect(res.status, res.text).toBe(201);
    expect((await linkRows(epic.id)).map((l) => l.issue_id)).toEqual([issue.id]);
    expect((await api.get(`/projects/${other.id}/issues/${res.body.iid}`)).body).toMatchObject({ epic_iid: null, epic: null });

    const second = await newIssue(project.id, { epic_id: epic.id });
    const below = await onPlan(api, 'premium', () => move(second, other.id));
    expect(below.status, below.text).toBe(201);
    expect((await linkRows(epic.id)).map((l) => l.issue_id)).toEqual([second.id, issue.id]);
    expect((await api.events(`issue-${below.body.id}`)).map((e) => e.type)).toEqual(['IssueOpened']);
  });
});
