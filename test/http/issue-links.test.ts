import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/fixtures.js';
import { startIssueWorld, type IssueVisibility, type IssueWorld } from '../support/issues.js';
import { permissionMatrix } from '../support/matrix.js';
import type { Role } from '../support/roles.js';
import { onPlan, type TestServer } from '../support/server.js';

let world: IssueWorld;
let api: TestServer;
beforeAll(async () => {
  world = await startIssueWorld();
  api = world.api;
});
afterAll(() => api.close());

/** Every call here runs on the starter plan, where `related_issues` is licensed. */
const starter = <T>(run: () => Promise<T>) => onPlan(api, 'starter', run);
const linksUrl = (projectId: number, iid: number) => `/projects/${projectId}/issues/${iid}/links`;
const link = (projectId: number, iid: number, target: { project: number | string; iid: number }, token?: string | null) =>
  api.post(linksUrl(projectId, iid), { target_project_id: target.project, target_issue_iid: target.iid }, token === undefined ? {} : { token });
const issueBasicKeys = ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'closed_at', 'closed_by', 'labels', 'milestone', 'assignees', 'author', 'assignee', 'user_notes_count', 'merge_requests_count', 'upvotes', 'downvotes', 'due_date', 'confidential', 'discussion_locked', 'web_url', 'time_stats', 'task_completion_status', 'weight'];

describe('issue links on the free plan', () => {
  it('do not exist: 404 {"error":"404 Not Found"} for every route', async () => {
    const project = world.projects.public;
    const iid = await world.issue(project);
    for (const res of [
      await onPlan(api, 'free', () => api.get(linksUrl(project, iid))),
      await onPlan(api, 'free', () => link(project, iid, { project, iid })),
      await onPlan(api, 'free', () => api.del(`${linksUrl(project, iid)}/1`)),
    ]) expect(res).toMatchObject({ status: 404, body: { error: '404 Not Found' } });
  });
});

describe('POST /projects/:id/issues/:issue_iid/links', () => {
  it('links two issues across projects (target by path) and answers both as IssueBasic; IssueLinkCreated', async () => {
    const source = await world.issue(world.projects.private);
    const target = await world.issue(world.projects.public, { title: 'Target' });
    const path = (await api.get(`/projects/${world.projects.public}`)).body.path_with_namespace as string;
    const res = await starter(() => link(world.projects.private, source, { project: path, iid: target }));
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body)).toEqual(['source_issue', 'target_issue']);
    expect(Object.keys(res.body.source_issue)).toEqual(issueBasicKeys);
    expect(res.body.source_issue).toMatchObject({ iid: source, project_id: world.projects.private });
    expect(res.body.target_issue).toMatchObject({ iid: target, project_id: world.projects.public, title: 'Target' });
    const { rows } = await sql<{ id: number }>`select id from issue_links where source_id = ${res.body.source_issue.id}`.execute(api.handle.db);
    expect(rows).toHaveLength(1);
    expect(await api.events(`issue-link-${rows[0]!.id}`)).toMatchObject([
      { type: 'IssueLinkCreated', data: { id: rows[0]!.id, source_id: res.body.source_issue.id, source_project_id: world.projects.private, target_id: res.body.target_issue.id, target_project_id: world.projects.public } },
    ]);
  });

  it('refuses a pair already linked, either way round: 409 Issue(s) already assigned', async () => {
    const p = world.projects.private;
    const [a, b] = [await world.issue(p), await world.issue(p)];
    expect((await starter(() => link(p, a, { project: p, iid: b }))).status).toBe(201);
    for (const res of [await starter(() => link(p, a, { project: p, iid: b })), await starter(() => link(p, b, { project: p, iid: a }))]) {
      expect(res).toMatchObject({ status: 409, body: { message: 'Issue(s) already assigned' } });
    }
  });

  it('links a pair once under concurrency, whichever way round the requests go', async () => {
    const p = world.projects.private;
    const [a, b] = [await world.issue(p), await world.issue(p)];
    const results = await starter(() => Promise.all([link(p, a, { project: p, iid: b }), link(p, b, { project: p, iid: a })]));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect((await starter(() => api.get(linksUrl(p, a)))).body).toHaveLength(1);
  });

  it('answers 404 Not found for an issue linked to itself, an unknown target issue or project', async () => {
    const p = world.projects.private;
    const a = await world.issue(p);
    expect(await starter(() => link(p, a, { project: p, iid: a }))).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await starter(() => link(p, a, { project: p, iid: 9999 }))).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await starter(() => link(p, a, { project: 999999, iid: 1 }))).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    expect(await starter(() => api.post(linksUrl(p, a), { target_project_id: p }))).toMatchObject({ status: 400, body: { error: 'target_issue_iid is missing' } });
  });

  it('answers 404 for a confidential target the caller cannot see, and No Issue found for a target they may not link', async () => {
    const { guest } = world.callers;
    const own = await world.issue(world.projects.public, {}, guest.token);
    const hidden = await world.issue(world.projects.public, { confidential: true });
    expect(await starter(() => link(world.projects.public, own, { project: world.projects.public, iid: hidden }, guest.token))).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    const open = await world.issue(world.projects.public);
    expect(await starter(() => link(world.projects.public, own, { project: world.projects.public, iid: open }, guest.token))).toMatchObject({ status: 404, body: { message: 'No Issue found for given params' } });
  });
});

describe('GET /projects/:id/issues/:issue_iid/links', () => {
  it('lists the issues linked either way, by link id, with issue_link_id; a confidential one only for who may see it', async () => {
    const p = world.projects.public;
    const [a, b, c, secret] = [await world.issue(p), await world.issue(p, { title: 'B' }), await world.issue(p, { title: 'C' }), await world.issue(p, { title: 'Secret', confidential: true })];
    const ab = (await starter(() => link(p, a, { project: p, iid: b }))).body;
    await starter(() => link(p, c, { project: p, iid: a }));
    await starter(() => link(p, a, { project: p, iid: secret }));
    const asReporter = await starter(() => api.get(linksUrl(p, a), { token: world.callers.reporter.token }));
    expect(asReporter.status).toBe(200);
    expect(asReporter.body.map((i: any) => i.title)).toEqual(['B', 'C', 'Secret']);
    expect(Object.keys(asReporter.body[0])).toEqual([...issueBasicKeys, 'issue_link_id']);
    expect(asReporter.body[0]).toMatchObject({ id: ab.target_issue.id, issue_link_id: expect.any(Number) });
    const ids = asReporter.body.map((i: any) => i.issue_link_id);
    expect([...ids].sort((x: number, y: number) => x - y)).toEqual(ids);
    const asGuest = await starter(() => api.get(linksUrl(p, a), { token: world.callers.guest.token }));
    expect(asGuest.body.map((i: any) => i.title)).toEqual(['B', 'C']);
    // The other end lists the link too.
    expect((await starter(() => api.get(linksUrl(p, c)))).body.map((i: any) => i.iid)).toEqual([a]);
  });

  it('drops a link when either issue is deleted, and with a project', async () => {
    const p = world.projects.private;
    const [a, b] = [await world.issue(p), await world.issue(p)];
    await starter(() => link(p, a, { project: p, iid: b }));
    expect((await api.del(`/projects/${p}/issues/${b}`)).status).toBe(204);
    expect((await starter(() => api.get(linksUrl(p, a)))).body).toEqual([]);

    const other = (await api.post('/projects', { name: `links-${Date.now()}` })).body.id as number;
    const c = await world.issue(p);
    const far = (await api.post(`/projects/${other}/issues`, { title: 'Far' })).body.iid as number;
    expect((await starter(() => link(p, c, { project: other, iid: far }))).status).toBe(201);
    expect((await starter(() => api.del(`/projects/${other}`))).status).toBe(202);
    // The deletion runs after the 202 (Projects::DestroyService in a worker).
    await eventually(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from issue_links where target_project_id = ${other}`.execute(api.handle.db);
      return rows[0]!.n === 0 ? true : undefined;
    });
    expect((await starter(() => api.get(linksUrl(p, c)))).body).toEqual([]);
  });
});

describe('DELETE /projects/:id/issues/:issue_iid/links/:issue_link_id', () => {
  it('writes EE\'s system notes on both issues: "marked this issue as related to", "removed the relation with"', async () => {
    const p = world.projects.private;
    const other = world.projects.public;
    const token = world.callers.developer.token;
    const [a, b] = [await world.issue(p), await world.issue(other)];
    const path = (await api.get(`/projects/${other}`, { token })).body.path_with_namespace as string;
    const aPath = (await api.get(`/projects/${p}`, { token })).body.path_with_namespace as string;
    // The two projects are in different groups: each names the other by its full path.
    const [aRef, bRef] = [aPath, path];
    await starter(() => link(p, a, { project: other, iid: b }, token));
    const [{ issue_link_id: id }] = (await starter(() => api.get(linksUrl(p, a), { token }))).body;
    await starter(() => api.del(`${linksUrl(p, a)}/${id}`, { token }));
    const systemNotes = async (projectId: number, iid: number, caller = token) =>
      ((await api.get(`/projects/${projectId}/issues/${iid}/notes`, { token: caller, query: { sort: 'asc' } })).body as { body: string; system: boolean; author: { id: number } }[]).filter((n) => n.system).map((n) => [n.body, n.author.id]);
    const dev = world.callers.developer.user!.id;
    expect(await systemNotes(p, a)).toEqual([
      [`marked this issue as related to ${bRef}#${b}`, dev],
      [`removed the relation with ${bRef}#${b}`, dev],
    ]);
    expect(await systemNotes(other, b)).toEqual([
      [`marked this issue as related to ${aRef}#${a}`, dev],
      [`removed the relation with ${aRef}#${a}`, dev],
    ]);
    // A reader of the public issue who may not read the private one sees neither.
    expect(await systemNotes(other, b, world.callers.nonMember.token)).toEqual([]);
  });

  it('removes the link, answers both issues, appends IssueLinkDeleted; then 404', async () => {
    const p = world.projects.private;
    const [a, b] = [await world.issue(p), await world.issue(p)];
    await starter(() => link(p, a, { project: p, iid: b }));
    const [{ issue_link_id: id }] = (await starter(() => api.get(linksUrl(p, a)))).body;
    const res = await starter(() => api.del(`${linksUrl(p, a)}/${id}`));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ source_issue: { iid: a }, target_issue: { iid: b } });
    expect((await api.events(`issue-link-${id}`)).map((e) => e.type)).toEqual(['IssueLinkCreated', 'IssueLinkDeleted']);
    expect((await starter(() => api.get(linksUrl(p, a)))).body).toEqual([]);
    expect(await starter(() => api.del(`${linksUrl(p, a)}/${id}`))).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    // Unlinked, the pair can be linked again.
    expect((await starter(() => link(p, b, { project: p, iid: a }))).status).toBe(201);
  });
});

// ───────────────────────────── Who may ─────────────────────────────

type Endpoint = 'GET' | 'POST' | 'DELETE';
const read = { anonymous: 401, blocked: 403, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 };
const write = { anonymous: 401, guest: 404, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 };
const remove = { anonymous: 401, guest: 404, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 };

permissionMatrix<Role, IssueVisibility>(
  {
    GET: { private: { ...read, nonMember: 404, external: 404 }, internal: { ...read, nonMember: 200, external: 404 }, public: { ...read, nonMember: 200, external: 200 } },
    POST: { private: { ...write, nonMember: 404 }, internal: { ...write, nonMember: 404 }, public: { ...write, nonMember: 404 } },
    DELETE: { private: { ...remove, nonMember: 404 }, public: { ...remove, nonMember: 404 } },
  },
  async ({ endpoint, caller, visibility }) => {
    const p = world.projects[visibility];
    const token = world.callers[caller].token;
    const [a, b] = [await world.issue(p), await world.issue(p)];
    const e = endpoint as Endpoint;
    if (e === 'POST') return (await starter(() => link(p, a, { project: p, iid: b }, token))).status;
    await starter(() => link(p, a, { project: p, iid: b }));
    if (e === 'GET') return (await starter(() => api.get(linksUrl(p, a), { token }))).status;
    const [{ issue_link_id: id }] = (await starter(() => api.get(linksUrl(p, a)))).body;
    return (await starter(() => api.del(`${linksUrl(p, a)}/${id}`, { token }))).status;
  },
);
