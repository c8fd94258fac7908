import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMergeRequest, updateMergeRequest } from '../../src/commands/merge-requests.js';
import { addMember, createGroup, createProject, eventually, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { run } from '../../src/commands/kernel/run.js';
import { mergeRequests } from '../../src/domain/merge-requests/aggregate.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const as = (user: { user: { id: number; username: string } }) => ({ actor_id: user.user.id, actor_username: user.user.username });

/** A project with a README on master and a `feature` branch one commit ahead. */
async function projectWithBranch(visibility: 'private' | 'public' = 'private') {
  const project = await createProject(api, { visibility, initialize_with_readme: true });
  const commit = await api.post(`/projects/${project.id}/repository/commits`, {
    branch: 'feature',
    start_branch: 'master',
    commit_message: 'Add a',
    actions: [{ action: 'create', file_path: 'a.txt', content: 'a\n' }],
  });
  expect(commit.status).toBe(201);
  return project;
}

const pending = async (token: string) => (await api.get('/todos', { token })).body as any[];

describe('POST /projects/:id/merge_requests/:merge_request_iid/todo', () => {
  it('marks a todo with the project and the whole merge request; 304 while it is pending; 404 for a missing one', async () => {
    const project = await projectWithBranch();
    const ctx = api.runtime.app.commands;
    await openMergeRequest({ ctx, metadata: { actor_id: 1, actor_username: 'root' } }, { projectId: project.id, sourceProjectId: project.id, authorId: 1, title: 'Add a', sourceBranch: 'feature', targetBranch: 'master', fields: {} });
    const res = await api.post(`/projects/${project.id}/merge_requests/1/todo`);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      project: {
        id: project.id,
        description: null,
        name: project.name,
        name_with_namespace: expect.any(String),
        path: project.path,
        path_with_namespace: project.path_with_namespace,
        created_at: expect.any(String),
      },
      author: expect.objectContaining({ id: 1, username: 'root' }),
      action_name: 'marked',
      target_type: 'MergeRequest',
      target: expect.objectContaining({ iid: 1, title: 'Add a' }),
      target_url: `${api.url}/${project.path_with_namespace}/-/merge_requests/1`,
      body: 'Add a',
      state: 'pending',
      created_at: expect.any(String),
    });
    expect(res.body.target).toMatchObject({ iid: 1, title: 'Add a', subscribed: true, changes_count: '1', diff_refs: expect.any(Object) });
    expect((await api.post(`/projects/${project.id}/merge_requests/1/todo`)).status).toBe(304);
    expect((await api.get('/todos?type=MergeRequest')).body.map((t: any) => t.id)).toContain(res.body.id);
    expect((await api.post(`/projects/${project.id}/merge_requests/2/todo`)).status).toBe(404);
    expect((await api.post(`/projects/${project.id}/merge_requests/1/todo`, undefined, { token: '' })).status).toBe(401);
  });

  it('is 404 for a private project of someone else and 403 for a guest who may not read merge requests', async () => {
    const project = await projectWithBranch();
    const ctx = api.runtime.app.commands;
    await openMergeRequest({ ctx, metadata: { actor_id: 1, actor_username: 'root' } }, { projectId: project.id, sourceProjectId: project.id, authorId: 1, title: 'Add a', sourceBranch: 'feature', targetBranch: 'master', fields: {} });
    const outsider = await api.createUser();
    expect((await api.post(`/projects/${project.id}/merge_requests/1/todo`, undefined, { token: outsider.token })).status).toBe(404);
    const guest = await api.createUser();
    await addMember(api, 'projects', project.id, guest.user.id, 10);
    expect((await api.post(`/projects/${project.id}/merge_requests/1/todo`, undefined, { token: guest.token })).status).toBe(403);
    const reporter = await api.createUser();
    await addMember(api, 'projects', project.id, reporter.user.id, 20);
    expect((await api.post(`/projects/${project.id}/merge_requests/1/todo`, undefined, { token: reporter.token })).status).toBe(201);
  });
});

describe('todos the merge request events make', () => {
  it('assigns, mentions and addresses members who can read it, never outsiders of a private project', async () => {
    const project = await projectWithBranch();
    const [author, assignee, mentioned, addressed, outsider] = await Promise.all([api.createUser(), api.createUser(), api.createUser(), api.createUser(), api.createUser()]);
    for (const member of [author, assignee, mentioned, addressed]) await addMember(api, 'projects', project.id, member.user.id, 30);
    const ctx = api.runtime.app.commands;
    const description = `@${addressed.user.username} please look\n\ncc @${mentioned.user.username} @${outsider.user.username}`;
    const id = await openMergeRequest(
      { ctx, metadata: as(author) },
      { projectId: project.id, sourceProjectId: project.id, authorId: author.user.id, title: 'Add a', sourceBranch: 'feature', targetBranch: 'master', fields: { description, assigneeIds: [assignee.user.id] } },
    );
    const assigned = await eventually(async () => ((await pending(assignee.token)).length > 0 ? await pending(assignee.token) : undefined));
    expect(assigned).toMatchObject([{ action_name: 'assigned', target_type: 'MergeRequest', author: { id: author.user.id }, target: { id, assignee: { id: assignee.user.id } } }]);
    await eventually(async () => ((await pending(mentioned.token)).length > 0 ? true : undefined));
    expect(await pending(mentioned.token)).toMatchObject([{ action_name: 'mentioned', body: 'Add a' }]);
    await eventually(async () => ((await pending(addressed.token)).length > 0 ? true : undefined));
    expect(await pending(addressed.token)).toMatchObject([{ action_name: 'directly_addressed' }]);
    await settled(api);
    expect(await pending(outsider.token)).toEqual([]);
    expect(await pending(author.token)).toEqual([]);

    // A new assignee and a newly mentioned user get theirs; those mentioned before do not get a second one.
    const later = await api.createUser();
    await addMember(api, 'projects', project.id, later.user.id, 20);
    await updateMergeRequest(
      { ctx, metadata: as(author) },
      { id, projectId: project.id, sourceProjectId: project.id, sourceBranch: 'feature', targetBranch: 'master', fields: { assigneeIds: [assignee.user.id, later.user.id], description: `${description} @${later.user.username}` }, byId: author.user.id },
    );
    await eventually(async () => ((await pending(later.token)).length === 2 ? true : undefined));
    expect((await pending(later.token)).map((t) => t.action_name).sort()).toEqual(['assigned', 'mentioned']);
    await settled(api);
    expect(await pending(mentioned.token)).toHaveLength(1);
    expect(await pending(assignee.token)).toHaveLength(1);

    // Closing marks the closer's pending todos on it done.
    await updateMergeRequest({ ctx, metadata: as(assignee) }, { id, projectId: project.id, sourceProjectId: project.id, sourceBranch: 'feature', targetBranch: 'master', fields: {}, stateEvent: 'close', byId: assignee.user.id });
    await eventually(async () => ((await pending(assignee.token)).length === 0 ? true : undefined));
    expect((await api.get('/todos?state=done', { token: assignee.token })).body).toMatchObject([{ action_name: 'assigned', state: 'done' }]);
    expect(await pending(later.token)).toHaveLength(2);
  });

  it('expands @group to the direct members of a group the author may read (mentions not disabled), and @all to the project members', async () => {
    const group = await createGroup(api, { visibility: 'internal' });
    const project = await createProject(api, { group, initialize_with_readme: true });
    expect((await api.post(`/projects/${project.id}/repository/commits`, { branch: 'feature', start_branch: 'master', commit_message: 'Add a', actions: [{ action: 'create', file_path: 'a.txt', content: 'a\n' }] })).status).toBe(201);
    const [author, inGroup, requester, hidden, quiet, projectOnly] = await Promise.all([api.createUser(), api.createUser(), api.createUser(), api.createUser(), api.createUser(), api.createUser()]);
    await addMember(api, 'groups', group.id, author.user.id, 30);
    await addMember(api, 'groups', group.id, inGroup.user.id, 20);
    expect((await api.post(`/groups/${group.id}/access_requests`, {}, { token: requester.token })).status).toBe(201);
    // A private group the author is no member of, and a group whose mentions are disabled: their members read the project all the same.
    const secret = await createGroup(api);
    await addMember(api, 'groups', secret.id, hidden.user.id, 30);
    const muted = await createGroup(api);
    expect((await api.put(`/groups/${muted.id}`, { mentions_disabled: true })).status).toBe(200);
    await addMember(api, 'groups', muted.id, quiet.user.id, 30);
    for (const member of [hidden, quiet, projectOnly]) await addMember(api, 'projects', project.id, member.user.id, 20);

    const ctx = api.runtime.app.commands;
    const description = `cc @${group.path} @${secret.path} @${muted.path}`;
    const id = await openMergeRequest({ ctx, metadata: as(author) }, { projectId: project.id, sourceProjectId: project.id, authorId: author.user.id, title: 'Add a', sourceBranch: 'feature', targetBranch: 'master', fields: { description } });
    await eventually(async () => ((await pending(inGroup.token)).length > 0 ? true : undefined));
    expect(await pending(inGroup.token)).toMatchObject([{ action_name: 'mentioned', target: { id } }]);
    expect(await pending(author.token)).toMatchObject([{ action_name: 'mentioned' }]);
    await settled(api);
    for (const nobody of [requester, hidden, quiet, projectOnly]) expect(await pending(nobody.token)).toEqual([]);

    // @all: every member of the project (its group's included), once each, when its author is one.
    await updateMergeRequest({ ctx, metadata: as(author) }, { id, projectId: project.id, sourceProjectId: project.id, sourceBranch: 'feature', targetBranch: 'master', fields: { description: `${description} @all` }, byId: author.user.id });
    await eventually(async () => ((await pending(projectOnly.token)).length > 0 ? true : undefined));
    await settled(api);
    for (const member of [hidden, quiet, projectOnly]) expect(await pending(member.token)).toMatchObject([{ action_name: 'mentioned', target: { id } }]);
    // Mentioned before by the group: UpdateService skips no user, but never makes a second pending todo.
    expect(await pending(inGroup.token)).toHaveLength(1);
    expect(await pending(requester.token)).toEqual([]);

    // An author outside the project: @all is text, not a mention.
    const other = await projectWithBranch();
    const stranger = await api.createUser();
    await addMember(api, 'projects', other.id, stranger.user.id, 30);
    const outsiderAuthor = await api.createUser();
    const otherId = await openMergeRequest({ ctx, metadata: as(outsiderAuthor) }, { projectId: other.id, sourceProjectId: other.id, authorId: outsiderAuthor.user.id, title: 'Add a', sourceBranch: 'feature', targetBranch: 'master', fields: { description: '@all' } });
    expect(otherId).toEqual(expect.any(Number));
    await settled(api);
    expect(await pending(stranger.token)).toEqual([]);
  });

  it('keeps no todo the reactor makes for a merge request deleted before it reacted', async () => {
    const project = await projectWithBranch();
    const [author, assignee] = await Promise.all([api.createUser(), api.createUser()]);
    for (const member of [author, assignee]) await addMember(api, 'projects', project.id, member.user.id, 30);
    const worker = api.runtime.worker!;
    await worker.stop();
    let id: number;
    try {
      id = await openMergeRequest(
        { ctx: api.runtime.app.commands, metadata: as(author) },
        { projectId: project.id, sourceProjectId: project.id, authorId: author.user.id, title: 'Gone soon', sourceBranch: 'feature', targetBranch: 'master', fields: { assigneeIds: [assignee.user.id] } },
      );
      const iid = (await api.handle.db.selectFrom('merge_requests').select('iid').where('id', '=', id).executeTakeFirstOrThrow()).iid;
      expect((await api.del(`/projects/${project.id}/merge_requests/${iid}`)).status).toBe(204);
    } finally {
      worker.start();
    }
    await worker.waitUntilCaughtUp({ timeoutMs: 60_000 });
    // The reactor still appends its todo (it decides from the merge request's stream), but the
    // projection keeps none for a target that is gone: GET /todos and the table agree.
    expect((await api.events(`todos-${assignee.user.id}`)).map((e) => e.type)).toEqual(['TodoCreated']);
    expect(await api.handle.db.selectFrom('todos').select('id').where('target_type', '=', 'MergeRequest').where('target_id', '=', id).execute()).toEqual([]);
    expect(await pending(assignee.token)).toEqual([]);
  });

  it('gives the author an unmergeable todo when the check finds a conflict, and removes todos with the merge request', async () => {
    const project = await projectWithBranch();
    const edit = (branch: string, content: string) =>
      api.post(`/projects/${project.id}/repository/commits`, { branch, commit_message: `Edit on ${branch}`, actions: [{ action: 'update', file_path: 'README.md', content }] });
    expect((await edit('feature', 'feature\n')).status).toBe(201);
    expect((await edit('master', 'master\n')).status).toBe(201);
    const author = await api.createUser();
    await addMember(api, 'projects', project.id, author.user.id, 30);
    const ctx = api.runtime.app.commands;
    const id = await openMergeRequest({ ctx, metadata: as(author) }, { projectId: project.id, sourceProjectId: project.id, authorId: author.user.id, title: 'Add a', sourceBranch: 'feature', targetBranch: 'master', fields: {} });
    const todos = await eventually(async () => ((await pending(author.token)).length > 0 ? await pending(author.token) : undefined), 30_000);
    expect(todos).toMatchObject([{ action_name: 'unmergeable', author: { id: author.user.id }, target: { merge_status: 'cannot_be_merged', has_conflicts: true } }]);
    await run({ ctx, metadata: as(author) }, mergeRequests, id, { type: 'DeleteMergeRequest' });
    expect(await pending(author.token)).toEqual([]);
  });
});

describe('a closing whose reactor runs late', () => {
  it('marks done the todos made before the closing, not one the closer made after it', async () => {
    const project = await projectWithBranch();
    const opened = await api.post(`/projects/${project.id}/merge_requests`, { title: 'Add a', source_branch: 'feature', target_branch: 'master' });
    expect(opened.status).toBe(201);
    const { iid } = opened.body as { iid: number };
    const issue = await api.post(`/projects/${project.id}/issues`, { title: 'Crash' });
    expect(issue.status).toBe(201);
    const issuePath = `/projects/${project.id}/issues/${issue.body.iid}`;
    expect((await api.post(`${issuePath}/todo`)).status).toBe(201);
    expect((await api.post(`/projects/${project.id}/merge_requests/${iid}/todo`)).status).toBe(201);
    const worker = api.runtime.worker!;
    await worker.stop();
    try {
      expect((await api.put(issuePath, { state_event: 'close' })).status).toBe(200);
      expect((await api.put(`/projects/${project.id}/merge_requests/${iid}`, { state_event: 'close' })).status).toBe(200);
      // The closer's todos before the closings are still pending: the reactor has not run. Done by hand, each is made again.
      const before = await pending(api.rootToken);
      for (const todo of before.filter((t) => t.project.id === project.id)) expect((await api.post(`/todos/${todo.id}/mark_as_done`)).status).toBe(201);
      expect((await api.post(`${issuePath}/todo`)).status).toBe(201);
      expect((await api.post(`/projects/${project.id}/merge_requests/${iid}/todo`)).status).toBe(201);
    } finally {
      worker.start();
    }
    await settled(api);
    await worker.waitUntilCaughtUp();
    const mine = (await pending(api.rootToken)).filter((t) => t.project.id === project.id);
    expect(mine.map((t) => t.target_type).sort()).toEqual(['Issue', 'MergeRequest']);
  });
});
