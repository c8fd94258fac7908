import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECTORS } from '../../src/projections/registry.js';
import { rebuildProjections } from '../../src/projections/rebuild.js';
import { permissionMatrix } from '../support/matrix.js';
import { startMergeRequestWorld, type MergeRequestUser } from '../support/merge-requests.js';
import type { Callers, Role } from '../support/roles.js';
import type { TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
let author: MergeRequestUser;
let projects: Readonly<Record<'private' | 'public', number>>;
let mergeRequest: (projectId: number, title?: string) => Promise<number>;

beforeAll(async () => {
  ({ api, callers, author, projects, mergeRequest } = await startMergeRequestWorld());
});
afterAll(() => api.close());

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

async function labelIds(projectId: number): Promise<Record<string, number>> {
  const res = await api.get(`/projects/${projectId}/labels`, { token: callers.maintainer.token, query: { per_page: 100 } });
  return Object.fromEntries(res.body.map((l: { name: string; id: number }) => [l.name, l.id]));
}

async function newIssue(projectId: number, body: Record<string, unknown>, token = callers.maintainer.token) {
  const res = await api.post(`/projects/${projectId}/issues`, { title: 'Events', ...body }, { token });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; iid: number };
}

describe('GET /projects/:id/issues/:issue_iid/resource_{label,milestone,state}_events', () => {
  it('maps the issue events: labels added and removed, milestone set and unset, close and reopen', async () => {
    const project = projects.private;
    const token = callers.maintainer.token;
    const milestone = (await api.post(`/projects/${project}/milestones`, { title: 'v1' }, { token })).body;
    const issue = await newIssue(project, { labels: 'bug,ui', milestone_id: milestone.id });
    const path = `/projects/${project}/issues/${issue.iid}`;
    expect((await api.put(path, { add_labels: 'perf', remove_labels: 'ui' }, { token })).status).toBe(200);
    expect((await api.put(path, { state_event: 'close' }, { token })).status).toBe(200);
    expect((await api.put(path, { milestone_id: 0 }, { token: callers.developer.token })).status).toBe(200);
    expect((await api.put(path, { state_event: 'reopen' }, { token })).status).toBe(200);
    const ids = await labelIds(project);
    const user = (id: number) => expect.objectContaining({ id, username: expect.any(String), web_url: expect.any(String) });
    const labelOf = (name: string) => ({ id: ids[name], name, color: expect.stringMatching(/^#/), description: null, description_html: '', text_color: expect.stringMatching(/^#/) });
    const head = { created_at: ISO, resource_type: 'Issue', resource_id: issue.id };

    const labels = await api.get(`${path}/resource_label_events`, { token: callers.guest.token });
    expect(labels.status).toBe(200);
    expect(labels.headers.get('x-total')).toBe('4');
    const [bug, ui] = [ids.bug!, ids.ui!].sort((a, b) => a - b);
    expect(labels.body).toEqual([
      { id: expect.any(Number), user: user(callers.maintainer.user!.id), ...head, label: labelOf(bug === ids.bug ? 'bug' : 'ui'), action: 'add' },
      { id: expect.any(Number), user: user(callers.maintainer.user!.id), ...head, label: labelOf(ui === ids.ui ? 'ui' : 'bug'), action: 'add' },
      { id: expect.any(Number), user: user(callers.maintainer.user!.id), ...head, label: labelOf('perf'), action: 'add' },
      { id: expect.any(Number), user: user(callers.maintainer.user!.id), ...head, label: labelOf('ui'), action: 'remove' },
    ]);
    const labelEventIds = labels.body.map((e: { id: number }) => e.id);
    expect(new Set(labelEventIds).size).toBe(4);
    // The two records of the create event share its position: 1000·p + 0 and + 1.
    expect(labelEventIds[1] - labelEventIds[0]).toBe(1);

    const one = await api.get(`${path}/resource_label_events/${labelEventIds[2]}`, { token: callers.guest.token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(labels.body[2]);
    const missing = await api.get(`${path}/resource_label_events/12345`, { token });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Not found' });
    // An id of another kind is no event of this one.
    expect((await api.get(`${path}/resource_state_events/${labelEventIds[0]}`, { token })).status).toBe(404);

    const milestones = await api.get(`${path}/resource_milestone_events`, { token });
    expect(milestones.status).toBe(200);
    expect(milestones.body).toEqual([
      { id: expect.any(Number), user: user(callers.maintainer.user!.id), ...head, milestone: expect.objectContaining({ id: milestone.id, iid: milestone.iid, title: 'v1', project_id: project }), action: 'add', state: 'opened' },
      { id: expect.any(Number), user: user(callers.developer.user!.id), ...head, milestone: expect.objectContaining({ id: milestone.id }), action: 'remove', state: 'closed' },
    ]);

    const states = await api.get(`${path}/resource_state_events`, { token });
    expect(states.status).toBe(200);
    expect(states.body).toEqual([
      { id: expect.any(Number), user: user(callers.maintainer.user!.id), ...head, state: 'closed' },
      { id: expect.any(Number), user: user(callers.maintainer.user!.id), ...head, state: 'reopened' },
    ]);
    expect((await api.get(`${path}/resource_state_events/${states.body[1].id}`, { token })).body).toEqual(states.body[1]);

    // Pagination: GitLab's headers over the mapped list.
    const page = await api.get(`${path}/resource_label_events`, { token, query: { per_page: 3, page: 2 } });
    expect(page.body.map((e: { id: number }) => e.id)).toEqual([labelEventIds[3]]);
    expect(page.headers.get('x-page')).toBe('2');
    expect(page.headers.get('x-total-pages')).toBe('2');
    expect(page.headers.get('x-prev-page')).toBe('1');
  });

  it('shows a deleted label as null, as GitLab nullifies label_id', async () => {
    const project = projects.public;
    const token = callers.maintainer.token;
    const issue = await newIssue(project, { labels: 'doomed' });
    const ids = await labelIds(project);
    expect((await api.del(`/projects/${project}/labels/${ids.doomed}`, { token })).status).toBe(204);
    const res = await api.get(`/projects/${project}/issues/${issue.iid}/resource_label_events`, { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([expect.objectContaining({ label: null, action: 'add', resource_type: 'Issue' })]);
  });

  it('404s a confidential issue for who may not see it, and an unknown issue', async () => {
    const issue = await newIssue(projects.public, { confidential: true, labels: 'secret' });
    const path = `/projects/${projects.public}/issues/${issue.iid}/resource_label_events`;
    expect((await api.get(path, { token: callers.nonMember.token })).status).toBe(404);
    expect((await api.get(path, { token: callers.guest.token })).status).toBe(404);
    expect((await api.get(path, { token: callers.reporter.token })).status).toBe(200);
    expect((await api.get(`/projects/${projects.public}/issues/99999/resource_label_events`, { token: callers.reporter.token })).status).toBe(404);
  });
});

describe('GET /projects/:id/merge_requests/:merge_request_iid/resource_*_events', () => {
  it('maps the merge request events', async () => {
    const project = projects.public;
    const iid = await mergeRequest(project, 'Labelled');
    const path = `/projects/${project}/merge_requests/${iid}`;
    const token = callers.maintainer.token;
    expect((await api.put(path, { labels: 'mr-a' }, { token })).status).toBe(200);
    expect((await api.put(path, { labels: '' }, { token: author.token })).status).toBe(200);
    expect((await api.put(path, { state_event: 'close' }, { token })).status).toBe(200);
    const mr = (await api.get(path, { token })).body;
    const labels = await api.get(`${path}/resource_label_events`, { token });
    expect(labels.status).toBe(200);
    expect(labels.body.map((e: Record<string, unknown>) => [e.resource_type, e.resource_id, (e.label as { name: string }).name, e.action, (e.user as { id: number }).id])).toEqual([
      ['MergeRequest', mr.id, 'mr-a', 'add', callers.maintainer.user!.id],
      ['MergeRequest', mr.id, 'mr-a', 'remove', author.id],
    ]);
    const states = await api.get(`${path}/resource_state_events`, { token });
    expect(states.body).toEqual([expect.objectContaining({ resource_type: 'MergeRequest', resource_id: mr.id, state: 'closed' })]);
    expect((await api.get(`${path}/resource_milestone_events`, { token })).body).toEqual([]);
  });
});

describe('resource events after a rebuild', () => {
  it('are the same, ids included, after every projection is rebuilt from the log', async () => {
    const project = projects.public;
    const token = callers.maintainer.token;
    const milestone = (await api.post(`/projects/${project}/milestones`, { title: 'rebuilt' }, { token })).body;
    const issue = await newIssue(project, { labels: 'r1,r2', milestone_id: milestone.id });
    const path = `/projects/${project}/issues/${issue.iid}`;
    await api.put(path, { labels: 'r3', state_event: 'close' }, { token });
    const iid = await mergeRequest(project, 'Rebuilt');
    const mrPath = `/projects/${project}/merge_requests/${iid}`;
    await api.put(mrPath, { labels: 'r1', milestone_id: milestone.id }, { token });
    const calls = [path, mrPath].flatMap((p) => ['label', 'milestone', 'state'].map((k) => () => api.get(`${p}/resource_${k}_events`, { token })));
    const before = await Promise.all(calls.map(async (call) => (await call()).text));
    expect(JSON.parse(before[0]!)).toHaveLength(5);
    await rebuildProjections(api.handle, PROJECTORS);
    expect(await Promise.all(calls.map(async (call) => (await call()).text))).toEqual(before);
  });
});

type Visibility = 'private' | 'public';
const paths: Record<string, string> = {};

describe('permissions', () => {
  beforeAll(async () => {
    for (const visibility of ['private', 'public'] as const) {
      const issue = await newIssue(projects[visibility], { labels: 'm' });
      paths[`issues ${visibility}`] = `/projects/${projects[visibility]}/issues/${issue.iid}`;
      paths[`merge_requests ${visibility}`] = `/projects/${projects[visibility]}/merge_requests/${await mergeRequest(projects[visibility], `Matrix ${visibility}`)}`;
    }
  });

  // `before { authenticate! }`, then find_noteable: reading the issue (guest) or the merge request (reporter on a private project).
  const issueCells = { private: { anonymous: 401, nonMember: 404, external: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200, blocked: 403 }, public: { anonymous: 401, nonMember: 200, external: 200, guest: 200 } };
  const mrCells = { private: { anonymous: 401, nonMember: 404, guest: 404, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 200, guest: 200, external: 200 } };
  permissionMatrix<Role, Visibility>(
    {
      'GET issues resource_label_events': issueCells,
      'GET issues resource_milestone_events': issueCells,
      'GET issues resource_state_events': issueCells,
      'GET merge_requests resource_label_events': mrCells,
      'GET merge_requests resource_state_events': mrCells,
    },
    async ({ endpoint, caller, visibility }) => {
      const [, collection, tail] = endpoint.split(' ') as [string, string, string];
      return (await api.get(`${paths[`${collection} ${visibility}`]}/${tail}`, { token: callers[caller].token })).status;
    },
  );

  it('read_api suffices', async () => {
    const scoped = await api.post(`/users/${callers.reporter.user!.id}/personal_access_tokens`, { name: 'ro', scopes: ['read_api'] }, { token: api.rootToken });
    if (scoped.status !== 201) return expect(scoped.status).toBe(201);
    expect((await api.get(`${paths['issues private']}/resource_label_events`, { token: scoped.body.token })).status).toBe(200);
  });
});
