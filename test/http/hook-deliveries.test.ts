import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDueDeliveries } from '../../src/commands/integration-delivery-sender.js';
import { BLANK_SHA } from '../../src/domain/integrations/deliveries.js';
import { createGroup, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { sshPublicKey } from '../support/ssh-keys.js';
import { orderedSender, WebhookReceiver } from '../support/webhook-receiver.js';

// One delivery per hook event kind, through the production `hook-deliveries` reactor and the
// integrations' sender (driven here with its own clock), to a local receiver that records
// GitLab 12.10's headers and payloads.

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

async function projectHook(projectId: number, settings: Record<string, unknown> = {}) {
  const path = `/project/${unique('h')}`;
  const res = await api.post(`/projects/${projectId}/hooks`, { url: `${receiver.url}${path}`, ...settings });
  expect(res.status, res.text).toBe(201);
  return path;
}

async function systemHook(settings: Record<string, unknown> = {}) {
  const path = `/system/${unique('s')}`;
  const res = await api.post('/hooks', { url: `${receiver.url}${path}`, ...settings });
  expect(res.status, res.text).toBe(201);
  return { path, id: res.body.id as number };
}

const commit = async (projectId: number, branch: string, message: string, file = unique('f'), from?: string) => {
  const res = await api.post(`/projects/${projectId}/repository/commits`, {
    branch,
    commit_message: message,
    actions: [{ action: 'create', file_path: file, content: 'x' }],
    ...(from ? { start_branch: from } : {}),
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; created_at: string };
};

const projectAttrs = (p: { id: number; name: string; path_with_namespace: string }, namespace: string) => {
  const web = `${api.url}/${p.path_with_namespace}`;
  const ssh = `git@127.0.0.1:${p.path_with_namespace}.git`;
  return {
    id: p.id,
    name: p.name,
    description: null,
    web_url: web,
    avatar_url: null,
    git_ssh_url: ssh,
    git_http_url: `${web}.git`,
    namespace,
    visibility_level: 0,
    path_with_namespace: p.path_with_namespace,
    default_branch: 'main',
    ci_config_path: null,
    homepage: web,
    url: ssh,
    ssh_url: ssh,
    http_url: `${web}.git`,
  };
};

describe('Push Hook', () => {
  it("posts GitLab 12.10's push data with its headers and token", async () => {
    const project = await createProject(api);
    const path = await projectHook(project.id, { token: 'shh' });
    const first = await commit(project.id, 'main', 'Add the first file\n\nWith a body.', 'README.md');
    const { headers, body } = (await received(path, 1))[0]!;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-gitlab-event']).toBe('Push Hook');
    expect(headers['x-gitlab-token']).toBe('shh');
    expect(headers['user-agent']).toBe('GitLab/12.10.0');
    const web = `${api.url}/${project.path_with_namespace}`;
    expect(body).toEqual({
      object_kind: 'push',
      event_name: 'push',
      before: BLANK_SHA,
      after: first.id,
      ref: 'refs/heads/main',
      checkout_sha: first.id,
      message: null,
      user_id: me.id,
      user_name: me.name,
      user_username: me.username,
      user_email: me.email,
      user_avatar: me.avatar_url,
      project_id: project.id,
      project: projectAttrs(project, me.name),
      commits: [
        {
          id: first.id,
          message: 'Add the first file\n\nWith a body.',
          title: 'Add the first file',
          timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/),
          url: `${web}/commit/${first.id}`,
          author: { name: me.name, email: me.email },
          added: ['README.md'],
          modified: [],
          removed: [],
        },
      ],
      total_commits_count: 1,
      push_options: {},
      repository: { name: project.name, url: body.project.url, description: null, homepage: web, git_http_url: `${web}.git`, git_ssh_url: body.project.url, visibility_level: 0 },
    });
    // GitLab's key order, byte for byte.
    expect(Object.keys(body)).toEqual(['object_kind', 'event_name', 'before', 'after', 'ref', 'checkout_sha', 'message', 'user_id', 'user_name', 'user_username', 'user_email', 'user_avatar', 'project_id', 'project', 'commits', 'total_commits_count', 'push_options', 'repository']);
  });

  it('honours push_events_branch_filter (a wildcard) and push_events', async () => {
    const project = await createProject(api);
    const filtered = await projectHook(project.id, { push_events_branch_filter: 'release/*' });
    const off = await projectHook(project.id, { push_events: false, tag_push_events: true });
    const all = await projectHook(project.id);
    await commit(project.id, 'main', 'One');
    await received(all, 1);
    const release = await api.post(`/projects/${project.id}/repository/branches`, { branch: 'release/1.0', ref: 'main' });
    expect(release.status).toBe(201);
    const [delivery] = await received(filtered, 1);
    expect(delivery!.body.ref).toBe('refs/heads/release/1.0');
    expect(delivery!.body.commits).toEqual([]);
    await received(all, 2);
    expect(receiver.at(off)).toEqual([]);
  });
});

describe('the changed files of a pushed commit', () => {
  it('are its paths added, modified and removed against its first parent, nested ones included', async () => {
    const project = await createProject(api);
    const path = await projectHook(project.id);
    const write = async (message: string, actions: { action: string; file_path: string; content?: string }[]) => {
      const res = await api.post(`/projects/${project.id}/repository/commits`, { branch: 'main', commit_message: message, actions });
      expect(res.status, res.text).toBe(201);
    };
    await write('Lay out', [
      { action: 'create', file_path: 'docs/a.md', content: 'a' },
      { action: 'create', file_path: 'src/x/y.ts', content: 'y' },
      { action: 'create', file_path: 'src/keep/k.ts', content: 'k' },
    ]);
    await write('Rework', [
      { action: 'update', file_path: 'src/x/y.ts', content: 'y2' },
      { action: 'delete', file_path: 'docs/a.md' },
      { action: 'create', file_path: 'src/z.ts', content: 'z' },
    ]);
    // Possibly sent side by side: told apart by their commit.
    const pushes = await received(path, 2);
    const [first, second] = ['Lay out', 'Rework'].map((message) => pushes.find(({ body }) => body.commits[0]?.message === message));
    expect(first!.body.commits[0]).toMatchObject({ added: ['docs/a.md', 'src/keep/k.ts', 'src/x/y.ts'], modified: [], removed: [] });
    expect(second!.body.commits[0]).toMatchObject({ message: 'Rework', added: ['src/z.ts'], modified: ['src/x/y.ts'], removed: ['docs/a.md'] });
  });
});

describe('Tag Push Hook', () => {
  it('posts tag push data for a new tag', async () => {
    const project = await createProject(api);
    const path = await projectHook(project.id, { push_events: false, tag_push_events: true });
    const head = await commit(project.id, 'main', 'Tagged');
    const tag = await api.post(`/projects/${project.id}/repository/tags`, { tag_name: 'v1.0', ref: 'main', message: 'First release' });
    expect(tag.status, tag.text).toBe(201);
    const { headers, body } = (await received(path, 1))[0]!;
    expect(headers['x-gitlab-event']).toBe('Tag Push Hook');
    expect(headers['x-gitlab-token']).toBeUndefined();
    expect(body).toMatchObject({ object_kind: 'tag_push', event_name: 'tag_push', before: BLANK_SHA, ref: 'refs/tags/v1.0', checkout_sha: head.id, message: 'First release', total_commits_count: 1 });
    expect(body.after).toBe(tag.body.target);
    expect(body.commits.map((c: { id: string }) => c.id)).toEqual([head.id]);
  });
});

describe('Merge Request Hook', () => {
  it('posts the merge request hook data on open and on update, with the changes', async () => {
    const project = await createProject(api);
    const path = await projectHook(project.id, { push_events: false, merge_requests_events: true });
    await commit(project.id, 'main', 'Base');
    await commit(project.id, 'topic', 'Topic work', unique('f'), 'main');
    const mr = await api.post(`/projects/${project.id}/merge_requests`, { title: 'WIP: Topic', description: 'See ![diagram](d.png)', source_branch: 'topic', target_branch: 'main' });
    expect(mr.status, mr.text).toBe(201);
    const [opened] = await received(path, 1);
    expect(opened!.headers['x-gitlab-event']).toBe('Merge Request Hook');
    const web = `${api.url}/${project.path_with_namespace}`;
    expect(opened!.body).toMatchObject({
      object_kind: 'merge_request',
      user: { name: me.name, username: me.username, avatar_url: me.avatar_url },
      project: projectAttrs(project, me.name),
      object_attributes: {
        assignee_id: null,
        author_id: me.id,
        id: mr.body.id,
        iid: mr.body.iid,
        source_branch: 'topic',
        target_branch: 'main',
        title: 'WIP: Topic',
        description: `See ![diagram](${api.url}/d.png)`,
        // Gitlab::UrlBuilder, as the API's web_url: under /-/ in 12.10.
        url: `${web}/-/merge_requests/${mr.body.iid}`,
        work_in_progress: true,
        state: 'opened',
        action: 'open',
      },
      labels: [],
      changes: {},
      repository: { name: project.name, homepage: web },
    });
    expect(opened!.body.object_attributes.created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(opened!.body.object_attributes.last_commit).toMatchObject({ message: 'Topic work', url: expect.stringContaining('/commit/') });
    expect((await api.put(`/projects/${project.id}/merge_requests/${mr.body.iid}`, { title: 'Topic' })).status).toBe(200);
    const [, updated] = await received(path, 2);
    expect(updated!.body.object_attributes).toMatchObject({ action: 'update', title: 'Topic', work_in_progress: false });
    expect(updated!.body.changes).toEqual({ title: { previous: 'WIP: Topic', current: 'Topic' } });
  });
});

describe('System Hook', () => {
  it('tells every system hook of projects, users, groups and memberships, with "System Hook"', async () => {
    const { path } = await systemHook({ token: 'sys' });
    const group = await createGroup(api);
    const project = await createProject(api, { group });
    const user = await api.createUser({ username: unique('u'), name: 'Hook User' });
    expect((await api.post(`/projects/${project.id}/members`, { user_id: user.user.id, access_level: 30 })).status).toBe(201);
    expect((await api.post(`/groups/${group.id}/members`, { user_id: user.user.id, access_level: 20 })).status).toBe(201);
    // The group's creator joins it as its owner first (user_add_to_group of root).
    const got = await received(path, 6);
    for (const { headers } of got) {
      expect(headers['x-gitlab-event']).toBe('System Hook');
      expect(headers['x-gitlab-token']).toBe('sys');
    }
    const byName = Object.fromEntries(got.filter(({ body }) => body.user_id !== me.id).map(({ body }) => [body.event_name, body]));
    expect(got.filter(({ body }) => body.user_id === me.id).map(({ body }) => [body.event_name, body.group_access])).toEqual([['user_add_to_group', 'Owner']]);
    const time = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(byName.group_create).toEqual({ event_name: 'group_create', created_at: time, updated_at: time, name: group.name, path: group.path, group_id: group.id, owner_name: null, owner_email: null });
    expect(byName.project_create).toEqual({
      event_name: 'project_create',
      created_at: time,
      updated_at: time,
      name: project.name,
      path: project.path,
      path_with_namespace: project.path_with_namespace,
      project_id: project.id,
      owner_name: group.name,
      owner_email: '',
      project_visibility: 'private',
    });
    expect(byName.user_create).toEqual({ event_name: 'user_create', created_at: time, updated_at: time, name: 'Hook User', email: user.user.email, user_id: user.user.id, username: user.user.username });
    expect(byName.user_add_to_team).toEqual({
      event_name: 'user_add_to_team',
      created_at: time,
      updated_at: time,
      project_name: project.name,
      project_path: project.path,
      project_path_with_namespace: project.path_with_namespace,
      project_id: project.id,
      user_username: user.user.username,
      user_name: 'Hook User',
      user_email: user.user.email,
      user_id: user.user.id,
      access_level: 'Developer',
      project_visibility: 'private',
    });
    expect(byName.user_add_to_group).toEqual({
      event_name: 'user_add_to_group',
      created_at: time,
      updated_at: time,
      group_name: group.name,
      group_path: group.path,
      group_id: group.id,
      user_username: user.user.username,
      user_name: 'Hook User',
      user_email: user.user.email,
      user_id: user.user.id,
      group_access: 'Reporter',
    });
  });

  it("tells of a deploy key's creation and destruction as a Key's: deploykey_create, deploykey_destroy (the model's class name)", async () => {
    const project = await createProject(api);
    // A system hook hears every event its reactor has not reached yet: the project's own first.
    await api.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 30_000 });
    const { path } = await systemHook();
    const key = sshPublicKey();
    const created = await api.post(`/projects/${project.id}/deploy_keys`, { title: 'deployer', key });
    expect(created.status, created.text).toBe(201);
    expect((await api.del(`/projects/${project.id}/deploy_keys/${created.body.id}`)).status).toBe(204);
    const got = await received(path, 2);
    const time = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const data = { created_at: time, updated_at: time, key: created.body.key, id: created.body.id, username: me.username };
    expect(got.map(({ body }) => body)).toEqual([
      { event_name: 'deploykey_create', ...data },
      { event_name: 'deploykey_destroy', ...data },
    ]);
    expect(Object.keys(got[0]!.body)).toEqual(['event_name', 'created_at', 'updated_at', 'key', 'id', 'username']);
    expect(got[0]!.headers['x-gitlab-event']).toBe('System Hook');
  });

  it('tells of a destroyed project as it was, and of repository updates (on by default)', async () => {
    const { path } = await systemHook();
    const project = await createProject(api);
    const pushed = await commit(project.id, 'main', 'Pushed');
    // The hook reactor reads the project when it reacts (docs/webhooks.md): it must have told of
    // the creation and the push before the project is gone.
    await api.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 60_000 });
    expect((await api.del(`/projects/${project.id}`)).status).toBe(202);
    // Only this project's events (the reactor may still be telling of earlier tests' events); its
    // creator joins a personal project as its maintainer (user_add_to_team).
    let got: { body: any }[] = [];
    // A deadline, not a count of rounds: on a loaded machine the reactor may take long to reach them.
    for (const deadline = Date.now() + 60_000; got.length < 4 && Date.now() < deadline; ) {
      await sendDueDeliveries(api.handle.db, SENDER);
      got = receiver.at(path).map((r) => ({ body: JSON.parse(r.body) })).filter(({ body }) => body.project_id === project.id);
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(got.map(({ body }) => body.event_name).sort()).toEqual(['project_create', 'project_destroy', 'repository_update', 'user_add_to_team']);
    const byName = Object.fromEntries(got.map(({ body }) => [body.event_name, body]));
    expect(byName.repository_update).toMatchObject({
      event_name: 'repository_update',
      user_id: me.id,
      project_id: project.id,
      changes: [{ before: BLANK_SHA, after: pushed.id, ref: 'refs/heads/main' }],
      refs: ['refs/heads/main'],
    });
    expect(byName.project_destroy).toMatchObject({ event_name: 'project_destroy', project_id: project.id, name: project.name, path_with_namespace: project.path_with_namespace, owner_name: me.name, owner_email: me.email });
  });

  it("tells of a fork's creation, not of its copied branches: a fork runs no post-receive", async () => {
    const { path } = await systemHook({ push_events: true });
    const source = await createProject(api);
    await commit(source.id, 'main', 'On the source');
    const fork = await api.post(`/projects/${source.id}/fork`, { namespace: 'root', path: unique('fork'), name: unique('Fork') });
    expect(fork.status).toBe(201);
    // A push to the fork afterwards is one: it is heard, and it comes after everything the fork's creation sent.
    const pushed = await commit(fork.body.id, 'main', 'On the fork');
    let got: any[] = [];
    for (const deadline = Date.now() + 60_000; !got.some((b) => b.event_name === 'push') && Date.now() < deadline; ) {
      await sendDueDeliveries(api.handle.db, SENDER);
      got = receiver.at(path).map((r) => JSON.parse(r.body)).filter((b) => b.project_id === fork.body.id);
      await new Promise((r) => setTimeout(r, 25));
    }
    await api.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 60_000 });
    await sendDueDeliveries(api.handle.db, SENDER);
    got = receiver.at(path).map((r) => JSON.parse(r.body)).filter((b) => b.project_id === fork.body.id);
    const pushes = got.filter((b) => b.event_name === 'push' || b.event_name === 'repository_update');
    expect(pushes.map((b) => [b.event_name, b.before ?? b.changes[0].before, b.after ?? b.changes[0].after])).toEqual(
      expect.arrayContaining([['push', expect.any(String), pushed.id], ['repository_update', expect.any(String), pushed.id]]),
    );
    expect(pushes).toHaveLength(2);
    expect(got.map((b) => b.event_name)).toContain('project_create');
  });

  it('GET /hooks/:id sends the sample project_create to that hook and answers it', async () => {
    const { path, id } = await systemHook();
    const res = await api.get(`/hooks/${id}`);
    const sample = { event_name: 'project_create', name: 'Ruby', path: 'ruby', project_id: 1, owner_name: 'Someone', owner_email: 'example@gitlabhq.com' };
    expect(res).toMatchObject({ status: 200, body: sample });
    const { body } = (await received(path, 1))[0]!;
    expect(body).toEqual(sample);
  });
});

describe('group hooks (starter)', () => {
  it("hear the pushes of their groups' projects, subgroups' included", async () => {
    const parent = await createGroup(api);
    const child = await createGroup(api, { parent });
    const project = await createProject(api, { group: child });
    const path = `/group/${unique('g')}`;
    expect((await api.post(`/groups/${parent.id}/hooks`, { url: `${receiver.url}${path}` })).status).toBe(201);
    await commit(project.id, 'main', 'In a subgroup');
    const { headers, body } = (await received(path, 1))[0]!;
    expect(headers['x-gitlab-event']).toBe('Push Hook');
    expect(body).toMatchObject({ object_kind: 'push', project_id: project.id });
  });
});

describe('the SSRF guard at connect', () => {
  it('fails the delivery when local requests are no longer allowed', async () => {
    const project = await createProject(api);
    const path = await projectHook(project.id);
    expect((await api.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: false })).status).toBe(200);
    try {
      await commit(project.id, 'main', 'Blocked');
      let row;
      // The system hooks an earlier test added hear this push too (and may send it: their own
      // setting allows local requests), so only the project hook's delivery is looked at.
      for (const deadline = Date.now() + 60_000; row?.status !== 'failed' && Date.now() < deadline; ) {
        await sendDueDeliveries(api.handle.db, SENDER);
        row = await api.handle.db.selectFrom('integration_deliveries').selectAll().where('project_id', '=', project.id).where('kind', '=', 'project_hook').executeTakeFirst();
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(row).toMatchObject({ status: 'failed', kind: 'project_hook', flag: 'push_hooks', last_error: 'is blocked: Requests to localhost are not allowed' });
      expect(receiver.at(path)).toEqual([]);
    } finally {
      expect((await api.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: true })).status).toBe(200);
    }
  });
});
