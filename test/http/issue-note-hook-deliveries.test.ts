import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDueDeliveries } from '../../src/commands/integration-delivery-sender.js';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { orderedSender, WebhookReceiver } from '../support/webhook-receiver.js';

// "Issue Hook", "Confidential Issue Hook" and "Note Hook" deliveries through the production
// `hook-deliveries` reactor and the sender, to a local receiver: GitLab 12.10's headers and
// payloads (doc/user/project/integrations/webhooks.md's examples, in GitLab's key order).

let counter = 0;
const unique = (prefix: string) => `${prefix}${++counter}x${process.pid}`;

let api: TestServer;
const receiver = new WebhookReceiver();
let me: { id: number; name: string; username: string; email: string; avatar_url: string };
const clock = new Date(Date.now() + 3_600_000);

beforeAll(async () => {
  api = await startTestServer({ plan: 'starter' }, { deliveries: false });
  await settled(api);
  await receiver.start();
  expect((await api.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: true })).status).toBe(200);
  me = (await api.get('/user')).body;
});
afterAll(async () => {
  await receiver.close();
  await api.close();
});

const SENDER = orderedSender(clock);

/** Sends what is due until `path` has received `count` requests (the reactor runs in the background). */
async function received(path: string, count: number) {
  const got = await receiver.awaitRequests(path, count, () => sendDueDeliveries(api.handle.db, SENDER));
  expect(got.length, `requests to ${path}`).toBe(count);
  return got.map((r) => ({ headers: r.headers, body: JSON.parse(r.body) }));
}

async function projectHook(projectId: number, settings: Record<string, unknown>) {
  const path = `/project/${unique('h')}`;
  const res = await api.post(`/projects/${projectId}/hooks`, { url: `${receiver.url}${path}`, push_events: false, token: 'shh', ...settings });
  expect(res.status, res.text).toBe(201);
  return path;
}

const commit = async (projectId: number, branch: string, message: string, from?: string) => {
  const res = await api.post(`/projects/${projectId}/repository/commits`, {
    branch,
    commit_message: message,
    actions: [{ action: 'create', file_path: unique('f'), content: 'x' }],
    ...(from ? { start_branch: from } : {}),
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; created_at: string };
};

const SIDEKIQ_TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/;
const userAttrs = () => ({ name: me.name, username: me.username, avatar_url: me.avatar_url });

function expectHeaders(headers: Record<string, unknown>, event: string) {
  expect(headers['content-type']).toBe('application/json');
  expect(headers['x-gitlab-event']).toBe(event);
  expect(headers['x-gitlab-token']).toBe('shh');
  expect(headers['user-agent']).toBe('GitLab/12.10.0');
}

describe('Issue Hook', () => {
  it("posts GitLab 12.10's issue data on open, update (with the changes), close and reopen", async () => {
    const project = await createProject(api);
    const path = await projectHook(project.id, { issues_events: true });
    const web = `${api.url}/${project.path_with_namespace}`;
    const created = await api.post(`/projects/${project.id}/issues`, { title: 'Broken build', description: 'It fails: ![shot](/uploads/abc/shot.png)', labels: 'bug', assignee_ids: [me.id] });
    expect(created.status, created.text).toBe(201);
    const iid = created.body.iid as number;

    const [opened] = await received(path, 1);
    expectHeaders(opened!.headers, 'Issue Hook');
    const body = opened!.body;
    expect(Object.keys(body)).toEqual(['object_kind', 'user', 'project', 'object_attributes', 'labels', 'changes', 'repository', 'assignees']);
    expect(body.object_kind).toBe('issue');
    expect(body.user).toEqual(userAttrs());
    expect(body.project).toMatchObject({ id: project.id, name: project.name, web_url: web, path_with_namespace: project.path_with_namespace, homepage: web });
    expect(body.object_attributes).toEqual({
      assignee_id: me.id,
      author_id: me.id,
      closed_at: null,
      confidential: false,
      created_at: expect.stringMatching(SIDEKIQ_TIME),
      // BaseBuilder#absolute_image_urls: under the instance's URL as it is (GitLab's double slash too).
      description: `It fails: ![shot](${api.url}//uploads/abc/shot.png)`,
      discussion_locked: null,
      due_date: null,
      id: created.body.id,
      iid,
      last_edited_at: null,
      last_edited_by_id: null,
      milestone_id: null,
      moved_to_id: null,
      duplicated_to_id: null,
      project_id: project.id,
      relative_position: body.object_attributes.relative_position,
      state_id: 1,
      time_estimate: 0,
      title: 'Broken build',
      updated_at: expect.stringMatching(SIDEKIQ_TIME),
      updated_by_id: null,
      weight: null,
      url: `${web}/-/issues/${iid}`,
      total_time_spent: 0,
      human_total_time_spent: null,
      human_time_estimate: null,
      assignee_ids: [me.id],
      state: 'opened',
      action: 'open',
    });
    expect(Object.keys(body.object_attributes).slice(0, 3)).toEqual(['assignee_id', 'author_id', 'closed_at']);
    expect(body.labels).toEqual([expect.objectContaining({ title: 'bug', project_id: project.id, type: 'ProjectLabel', template: false, group_id: null })]);
    // Issuable#to_hook_data without old associations: the creation's attributes, and labels, assignees and total_time_spent as from none.
    const label = body.labels[0];
    expect(body.changes).toEqual({
      author_id: { previous: null, current: me.id },
      created_at: { previous: null, current: body.object_attributes.created_at },
      description: { previous: null, current: 'It fails: ![shot](/uploads/abc/shot.png)' },
      id: { previous: null, current: created.body.id },
      iid: { previous: null, current: iid },
      project_id: { previous: null, current: project.id },
      ...(body.object_attributes.relative_position === null ? {} : { relative_position: { previous: null, current: body.object_attributes.relative_position } }),
      title: { previous: null, current: 'Broken build' },
      updated_at: { previous: null, current: body.object_attributes.updated_at },
      assignees: { previous: [], current: [userAttrs()] },
      labels: { previous: [], current: [label] },
      total_time_spent: { previous: null, current: 0 },
    });
    expect(Object.keys(body.changes).slice(-3)).toEqual(['assignees', 'labels', 'total_time_spent']);
    expect(body.repository).toEqual({ name: project.name, url: body.project.url, description: null, homepage: web });
    expect(body.assignees).toEqual([userAttrs()]);

    expect((await api.put(`/projects/${project.id}/issues/${iid}`, { title: 'Broken build on main', labels: '' })).status).toBe(200);
    const updated = (await received(path, 2))[1]!.body;
    expect(updated.object_attributes).toMatchObject({ title: 'Broken build on main', action: 'update' });
    expect(updated.changes).toEqual({
      title: { previous: 'Broken build', current: 'Broken build on main' },
      labels: { previous: [expect.objectContaining({ title: 'bug' })], current: [] },
    });
    expect(updated.labels).toEqual([]);

    expect((await api.put(`/projects/${project.id}/issues/${iid}`, { state_event: 'close' })).status).toBe(200);
    const closed = (await received(path, 3))[2]!.body;
    expect(closed.object_attributes).toMatchObject({ state: 'closed', state_id: 2, action: 'close', closed_at: expect.stringMatching(SIDEKIQ_TIME) });
    // CloseService's last save is `issue.update(closed_by:)`: of the safe keys, updated_at.
    const closedAt = closed.object_attributes.updated_at;
    expect(closed.changes).toEqual({ updated_at: { previous: closedAt, current: closedAt }, assignees: { previous: [], current: [userAttrs()] }, total_time_spent: { previous: null, current: 0 } });

    expect((await api.put(`/projects/${project.id}/issues/${iid}`, { state_event: 'reopen' })).status).toBe(200);
    const reopened = (await received(path, 4))[3]!.body;
    expect(reopened.object_attributes).toMatchObject({ state: 'opened', state_id: 1, action: 'reopen' });
    expect(reopened.changes).toEqual({
      closed_at: { previous: closed.object_attributes.closed_at, current: null },
      state_id: { previous: 2, current: 1 },
      updated_at: { previous: closedAt, current: reopened.object_attributes.updated_at },
      assignees: { previous: [], current: [userAttrs()] },
      total_time_spent: { previous: null, current: 0 },
    });
  });

  it('sends a confidential issue only to confidential_issues_events, as "Confidential Issue Hook"', async () => {
    const project = await createProject(api);
    const open = await projectHook(project.id, { issues_events: true });
    const secret = await projectHook(project.id, { confidential_issues_events: true });
    expect((await api.post(`/projects/${project.id}/issues`, { title: 'Leak', confidential: true })).status).toBe(201);
    expect((await api.post(`/projects/${project.id}/issues`, { title: 'Public' })).status).toBe(201);
    const [hidden] = await received(secret, 1);
    expectHeaders(hidden!.headers, 'Confidential Issue Hook');
    expect(hidden!.body.object_attributes).toMatchObject({ title: 'Leak', confidential: true, action: 'open' });
    expect((await received(open, 1))[0]!.body.object_attributes.title).toBe('Public');
  });
});

describe('a lagging reactor', () => {
  it('tells of an issue as it was at each change, though it was changed again and deleted before the reactor read it', async () => {
    const project = await createProject(api);
    const path = await projectHook(project.id, { issues_events: true });
    const created = await api.post(`/projects/${project.id}/issues`, { title: 'Before', labels: 'bug' });
    expect(created.status, created.text).toBe(201);
    const { id, iid } = created.body as { id: number; iid: number };
    await received(path, 1);
    // The reactor waits while the issue is changed twice and deleted: it reacts to both updates after the deletion.
    const worker = api.runtime.worker!;
    await worker.stop();
    try {
      expect((await api.put(`/projects/${project.id}/issues/${iid}`, { title: 'After', labels: '' })).status).toBe(200);
      expect((await api.put(`/projects/${project.id}/issues/${iid}`, { title: 'Later', state_event: 'close' })).status).toBe(200);
      expect((await api.del(`/projects/${project.id}/issues/${iid}`)).status).toBe(204);
      expect((await api.get(`/projects/${project.id}/issues/${iid}`)).status).toBe(404);
    } finally {
      worker.start();
    }
    // Recorded together, they are sent side by side: told apart by what they say, not by when they came.
    const late = (await received(path, 4)).slice(1);
    const updated = late.find(({ body }) => body.object_attributes.title === 'After');
    const again = late.find(({ body }) => body.object_attributes.title === 'Later' && body.object_attributes.action === 'update');
    const closed = late.find(({ body }) => body.object_attributes.action === 'close');
    expect(updated!.body.object_attributes).toMatchObject({ id, iid, title: 'After', state: 'opened', closed_at: null, action: 'update' });
    expect(updated!.body.labels).toEqual([]);
    expect(updated!.body.changes).toEqual({
      title: { previous: 'Before', current: 'After' },
      labels: { previous: [expect.objectContaining({ title: 'bug' })], current: [] },
    });
    // One request, two events: the update (action update, still open) and then the close.
    expect(again!.body.object_attributes).toMatchObject({ title: 'Later', state: 'opened', action: 'update' });
    expect(again!.body.changes).toEqual({ title: { previous: 'After', current: 'Later' } });
    expect(closed!.body.object_attributes).toMatchObject({ title: 'Later', state: 'closed', state_id: 2, action: 'close', closed_at: expect.stringMatching(SIDEKIQ_TIME) });
  });
});

describe('Note Hook', () => {
  it("posts GitLab 12.10's note data for a merge request's note, with the merge request", async () => {
    const project = await createProject(api);
    const path = await projectHook(project.id, { note_events: true });
    await commit(project.id, 'main', 'Base');
    await commit(project.id, 'topic', 'Topic work', 'main');
    const mr = await api.post(`/projects/${project.id}/merge_requests`, { title: 'Topic', source_branch: 'topic', target_branch: 'main' });
    expect(mr.status, mr.text).toBe(201);
    const note = await api.post(`/projects/${project.id}/merge_requests/${mr.body.iid}/notes`, { body: 'Looks good ![x](x.png)' });
    expect(note.status, note.text).toBe(201);
    const web = `${api.url}/${project.path_with_namespace}`;

    const [{ headers, body }] = (await received(path, 1)) as [{ headers: Record<string, unknown>; body: any }];
    expectHeaders(headers, 'Note Hook');
    expect(Object.keys(body)).toEqual(['object_kind', 'user', 'project_id', 'project', 'object_attributes', 'repository', 'merge_request']);
    expect(body).toMatchObject({ object_kind: 'note', user: userAttrs(), project_id: project.id, repository: { name: project.name, url: body.project.url, description: null, homepage: web } });
    expect(body.object_attributes).toEqual({
      attachment: null,
      author_id: me.id,
      change_position: null,
      commit_id: null,
      created_at: expect.stringMatching(SIDEKIQ_TIME),
      discussion_id: expect.stringMatching(/^[0-9a-f]{40}$/),
      id: note.body.id,
      line_code: null,
      note: 'Looks good ![x](x.png)',
      noteable_id: mr.body.id,
      noteable_type: 'MergeRequest',
      original_position: null,
      position: null,
      project_id: project.id,
      resolved_at: null,
      resolved_by_id: null,
      resolved_by_push: null,
      st_diff: null,
      system: false,
      type: null,
      updated_at: expect.stringMatching(SIDEKIQ_TIME),
      updated_by_id: null,
      description: `Looks good ![x](${api.url}/x.png)`,
      url: `${web}/-/merge_requests/${mr.body.iid}#note_${note.body.id}`,
    });
    expect(body.merge_request).toMatchObject({ id: mr.body.id, iid: mr.body.iid, title: 'Topic', source_branch: 'topic', target_branch: 'main', state: 'opened' });
  });

  it("posts a commit's note with the commit, and nothing to a hook without note_events", async () => {
    const project = await createProject(api);
    const path = await projectHook(project.id, { note_events: true });
    const silent = await projectHook(project.id, { issues_events: true });
    const head = await commit(project.id, 'main', 'Commented\n\nBody');
    const note = await api.post(`/projects/${project.id}/repository/commits/${head.id}/comments`, { note: 'Nice commit' });
    expect(note.status, note.text).toBe(201);
    const web = `${api.url}/${project.path_with_namespace}`;
    const body = (await received(path, 1))[0]!.body;
    expect(Object.keys(body)).toEqual(['object_kind', 'user', 'project_id', 'project', 'object_attributes', 'repository', 'commit']);
    expect(body.object_attributes).toMatchObject({ note: 'Nice commit', noteable_type: 'Commit', noteable_id: null, commit_id: head.id });
    expect(body.object_attributes.url).toMatch(new RegExp(`^${web.replace(/[.]/g, '\\.')}/-/commit/${head.id}#note_\\d+$`));
    expect(body.commit).toEqual({
      id: head.id,
      message: 'Commented\n\nBody',
      title: 'Commented',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/),
      url: `${web}/commit/${head.id}`,
      author: { name: me.name, email: me.email },
    });
    expect(receiver.at(silent)).toEqual([]);
  });

  it("posts an issue's note with the issue; a confidential issue's note only to confidential_note_events", async () => {
    const project = await createProject(api);
    const path = await projectHook(project.id, { note_events: true });
    const secret = await projectHook(project.id, { confidential_note_events: true });
    const issue = await api.post(`/projects/${project.id}/issues`, { title: 'Noted' });
    const hidden = await api.post(`/projects/${project.id}/issues`, { title: 'Hidden', confidential: true });
    expect((await api.post(`/projects/${project.id}/issues/${issue.body.iid}/notes`, { body: 'On the issue' })).status).toBe(201);
    expect((await api.post(`/projects/${project.id}/issues/${hidden.body.iid}/notes`, { body: 'Quietly' })).status).toBe(201);
    const web = `${api.url}/${project.path_with_namespace}`;
    const body = (await received(path, 1))[0]!.body;
    expect(Object.keys(body)).toEqual(['object_kind', 'user', 'project_id', 'project', 'object_attributes', 'repository', 'issue']);
    expect(body.object_attributes).toMatchObject({ note: 'On the issue', noteable_type: 'Issue', noteable_id: issue.body.id, url: expect.stringMatching(new RegExp(`/-/issues/${issue.body.iid}#note_\\d+$`)) });
    expect(body.issue).toMatchObject({ id: issue.body.id, iid: issue.body.iid, title: 'Noted', url: `${web}/-/issues/${issue.body.iid}`, state: 'opened' });
    const [confidential] = await received(secret, 1);
    expectHeaders(confidential!.headers, 'Confidential Note Hook');
    expect(confidential!.body.object_attributes.note).toBe('Quietly');
    expect(confidential!.body.issue).toMatchObject({ title: 'Hidden', confidential: true });
  });

  it("posts a project snippet's note with the snippet", async () => {
    const project = await createProject(api);
    const path = await projectHook(project.id, { note_events: true });
    const snippet = await api.post(`/projects/${project.id}/snippets`, { title: 'Snip', file_name: 'hello.rb', code: "puts 'Hello'", visibility: 'private' });
    expect(snippet.status, snippet.text).toBe(201);
    const note = await api.post(`/projects/${project.id}/snippets/${snippet.body.id}/notes`, { body: 'Neat' });
    expect(note.status, note.text).toBe(201);
    const web = `${api.url}/${project.path_with_namespace}`;
    const body = (await received(path, 1))[0]!.body;
    expect(Object.keys(body)).toEqual(['object_kind', 'user', 'project_id', 'project', 'object_attributes', 'repository', 'snippet']);
    expect(body.object_attributes).toMatchObject({ note: 'Neat', noteable_type: 'Snippet', noteable_id: snippet.body.id, url: `${web}/-/snippets/${snippet.body.id}#note_${note.body.id}` });
    expect(body.snippet).toEqual({
      id: snippet.body.id,
      title: 'Snip',
      content: "puts 'Hello'",
      author_id: me.id,
      project_id: project.id,
      created_at: expect.stringMatching(SIDEKIQ_TIME),
      updated_at: expect.stringMatching(SIDEKIQ_TIME),
      file_name: 'hello.rb',
      expires_at: null,
      type: 'ProjectSnippet',
      visibility_level: 0,
    });
  });
});
