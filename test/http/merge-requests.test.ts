import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { roundTrips } from '../support/round-trips.js';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  // Its projects' branches are protected by the tests themselves: none at a default branch's first write (default_branch_protection, test/http/git-push.test.ts).
  await api.put('/application/settings', { default_branch_protection: 0 });
});
afterAll(() => api.close());

const base = (projectId: number) => `/projects/${projectId}/merge_requests`;
const commit = async (projectId: number, body: Record<string, unknown>, token?: string) => {
  const res = await api.post(`/projects/${projectId}/repository/commits`, body, token === undefined ? {} : { token });
  if (res.status !== 201) throw new Error(`commit: ${res.status} ${res.text}`);
  return res.body as { id: string };
};
const file = (path: string, content: string) => ({ action: 'create', file_path: path, content });

/** A project with master (one commit) and `feature` (master + two commits changing two files). */
async function projectWithBranches(options: Parameters<typeof createProject>[1] = {}) {
  const project = await createProject(api, options);
  const token = options.token;
  const master = await commit(project.id, { branch: 'master', commit_message: 'Initial', actions: [file('README.md', 'hello\n')] }, token);
  const f1 = await commit(project.id, { branch: 'feature', start_branch: 'master', commit_message: 'Add a', actions: [file('a.txt', 'a\n')] }, token);
  const f2 = await commit(project.id, { branch: 'feature', commit_message: 'Add b', actions: [file('b.txt', 'b\n')] }, token);
  return { project, master: master.id, feature: [f1.id, f2.id] };
}

const mrCount = async (projectId: number) =>
  Number((await sql<{ n: string }>`select count(*) as n from merge_requests where project_id = ${projectId}`.execute(api.handle.db)).rows[0]!.n);

describe('POST /projects/:id/merge_requests', () => {
  it('opens a merge request and answers Entities::MergeRequest, every field', async () => {
    const { project, master, feature } = await projectWithBranches();
    const root = (await api.get('/user')).body;
    const res = await api.post(base(project.id), { title: 'Add a and b', source_branch: 'feature', target_branch: 'master', description: 'Two files\n\n- [ ] one\n- [x] two' });
    expect(res.status).toBe(201);
    const web = `${(await api.get(`/projects/${project.id}`)).body.web_url}/-/merge_requests/1`;
    const author = { id: root.id, name: root.name, username: root.username, state: 'active', avatar_url: root.avatar_url, web_url: root.web_url };
    expect(res.body).toEqual({
      id: expect.any(Number),
      iid: 1,
      project_id: project.id,
      title: 'Add a and b',
      description: 'Two files\n\n- [ ] one\n- [x] two',
      state: 'opened',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: res.body.created_at,
      merged_by: null,
      merged_at: null,
      closed_by: null,
      closed_at: null,
      target_branch: 'master',
      source_branch: 'feature',
      user_notes_count: 0,
      upvotes: 0,
      downvotes: 0,
      author,
      assignees: [],
      assignee: null,
      source_project_id: project.id,
      target_project_id: project.id,
      labels: [],
      work_in_progress: false,
      milestone: null,
      merge_when_pipeline_succeeds: false,
      merge_status: 'can_be_merged',
      sha: feature[1],
      merge_commit_sha: null,
      squash_commit_sha: null,
      discussion_locked: null,
      should_remove_source_branch: null,
      force_remove_source_branch: false,
      reference: '!1',
      references: { short: '!1', relative: '!1', full: `${project.path_with_namespace}!1` },
      web_url: web,
      time_stats: { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null },
      squash: false,
      task_completion_status: { count: 2, completed_count: 1 },
      has_conflicts: false,
      blocking_discussions_resolved: true,
      approvals_before_merge: null,
      subscribed: true,
      changes_count: '2',
      latest_build_started_at: null,
      latest_build_finished_at: null,
      first_deployed_to_production_at: null,
      pipeline: null,
      head_pipeline: null,
      diff_refs: { base_sha: master, head_sha: feature[1], start_sha: master },
      merge_error: null,
      user: { can_merge: true },
    });
    expect(Object.keys(res.body).at(-1)).toBe('user');
    // The merge-request-refresh reactor records its check asynchronously (MergeRequestMergeStatusChecked).
    expect((await api.events(`merge-request-${res.body.id}`)).map((e) => e.type).filter((type) => type !== 'MergeRequestMergeStatusChecked')).toEqual(['MergeRequestOpened']);
  });

  it('answers the merge status of the heads it took, as the single view checks it: conflicting heads and a source without commits cannot be merged', async () => {
    const { project } = await projectWithBranches();
    await commit(project.id, { branch: 'master', commit_message: 'Theirs', actions: [file('a.txt', 'theirs\n')] });
    expect((await api.post(`/projects/${project.id}/repository/branches`, { branch: 'level', ref: 'master' })).status).toBe(201);
    for (const source of ['feature', 'level']) {
      const res = await api.post(base(project.id), { title: source, source_branch: source, target_branch: 'master' });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ merge_status: 'cannot_be_merged', has_conflicts: true, subscribed: true });
      expect((await api.get(`${base(project.id)}/${res.body.iid}`)).body).toMatchObject({ merge_status: 'cannot_be_merged', has_conflicts: true });
    }
  });
});

// GitLab 12 Entities::MergeRequest: `expose :user { expose :can_merge }`, MergeRequest#can_be_merged_by?
// — Gitlab::UserAccess#can_update_branch?(target_branch): push or merge access to it, none for anonymous.
describe('user.can_merge on the single views', () => {
  it('says whether the caller may merge into the target branch: protected for maintainers, open to developers, closed to anonymous', async () => {
    const { project } = await projectWithBranches({ visibility: 'public' });
    const developer = await api.createUser({ username: 'canmerge-dev' });
    const maintainer = await api.createUser({ username: 'canmerge-maint' });
    await addMember(api, 'projects', project.id, developer.user.id, 30);
    await addMember(api, 'projects', project.id, maintainer.user.id, 40);
    expect((await api.post(`/projects/${project.id}/protected_branches`, { name: 'master', push_access_level: 0, merge_access_level: 40 })).status).toBe(201);
    expect((await api.post(`/projects/${project.id}/repository/branches`, { branch: 'develop', ref: 'master' })).status).toBe(201);
    const canMerge = (res: { status: number; body: { user?: { can_merge: boolean } } }) => [res.status, res.body.user];

    // Into protected master: a maintainer may merge, a developer (its author) may not, nor may anonymous callers.
    const created = await api.post(base(project.id), { title: 'Into master', source_branch: 'feature', target_branch: 'master' }, { token: developer.token });
    expect(canMerge(created)).toEqual([201, { can_merge: false }]);
    const path = `${base(project.id)}/${created.body.iid}`;
    expect(canMerge(await api.get(path, { token: null }))).toEqual([200, { can_merge: false }]);
    expect(canMerge(await api.get(path, { token: developer.token }))).toEqual([200, { can_merge: false }]);
    expect(canMerge(await api.get(path, { token: maintainer.token }))).toEqual([200, { can_merge: true }]);
    expect(canMerge(await api.get(`${path}/changes`, { token: maintainer.token }))).toEqual([200, { can_merge: true }]);
    expect(canMerge(await api.put(path, { description: 'x' }, { token: developer.token }))).toEqual([200, { can_merge: false }]);
    expect(canMerge(await api.put(path, { description: 'y' }, { token: maintainer.token }))).toEqual([200, { can_merge: true }]);
    expect(canMerge(await api.post(`${path}/unsubscribe`, undefined, { token: developer.token }))).toEqual([201, { can_merge: false }]);
    // A todo's target is Entities::MergeRequest too, for the todo's owner.
    const todo = await api.post(`${path}/todo`, undefined, { token: maintainer.token });
    expect([todo.status, todo.body.target.user]).toEqual([201, { can_merge: true }]);

    // Retargeted to an unprotected branch: developers push to it, so they may merge.
    expect(canMerge(await api.put(path, { target_branch: 'develop' }, { token: developer.token }))).toEqual([200, { can_merge: true }]);
    expect(canMerge(await api.get(path, { token: null }))).toEqual([200, { can_merge: false }]);
    const merged = await api.put(`${path}/merge`, {}, { token: developer.token });
    expect(canMerge(merged)).toEqual([200, { can_merge: true }]);
    expect(merged.body.state).toBe('merged');
  });
});

let branchCounter = 0;
/** A new branch off `feature` and a merge request of it into master, opened by root (or `token`). */
async function openOn(projectId: number, body: Record<string, unknown> = {}, token?: string) {
  const branch = `topic-${++branchCounter}`;
  const made = await api.post(`/projects/${projectId}/repository/branches`, { branch, ref: 'feature' });
  if (made.status !== 201) throw new Error(`branch: ${made.status} ${made.text}`);
  const res = await api.post(base(projectId), { title: `MR of ${branch}`, source_branch: branch, target_branch: 'master', ...body }, token === undefined ? {} : { token });
  if (res.status !== 201) throw new Error(`open: ${res.status} ${res.text}`);
  return res.body;
}

describe('POST /projects/:id/merge_requests: parameters and refusals', () => {
  it('answers Grape errors for missing parameters, before looking at the project', async () => {
    const res = await api.post(base(999999), { source_branch: 'feature' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'title is missing, target_branch is missing' });
    const { project } = await projectWithBranches();
    const noTitle = await api.post(base(project.id), { source_branch: 'feature', target_branch: 'master' });
    expect([noTitle.status, noTitle.body]).toEqual([400, { error: 'title is missing' }]);
    const badBool = await api.post(base(project.id), { title: 't', source_branch: 'feature', target_branch: 'master', squash: 'maybe' });
    expect([badBool.status, badBool.body]).toEqual([400, { error: 'squash is invalid' }]);
    expect(await mrCount(project.id)).toBe(0);
  });

  it('refuses a blank title, the same branch (422), missing branches (400), another open merge request (409), and writes nothing', async () => {
    const { project } = await projectWithBranches();
    const blank = await api.post(base(project.id), { title: '  ', source_branch: 'feature', target_branch: 'master' });
    expect([blank.status, blank.body]).toEqual([400, { message: { title: ["can't be blank"] } }]);
    const same = await api.post(base(project.id), { title: 't', source_branch: 'master', target_branch: 'master' });
    expect([same.status, same.body]).toEqual([422, { message: ["You can't use same project/branch for source and target"] }]);
    const missing = await api.post(base(project.id), { title: 't', source_branch: 'nope', target_branch: 'gone' });
    expect([missing.status, missing.body]).toEqual([400, { message: { source_branch: ['does not exist'], target_branch: ['does not exist'] } }]);
    expect(await mrCount(project.id)).toBe(0);

    const first = await api.post(base(project.id), { title: 'first', source_branch: 'feature', target_branch: 'master' });
    expect(first.status).toBe(201);
    const again = await api.post(base(project.id), { title: 'again', source_branch: 'feature', target_branch: 'master', labels: 'fresh-label' });
    expect([again.status, again.body]).toEqual([409, { message: ['Another open merge request already exists for this source branch: !1'] }]);
    expect(await mrCount(project.id)).toBe(1);
    // The label the refused request named was not created either: one transaction.
    expect((await api.get(`/projects/${project.id}/labels`)).body).toEqual([]);
    // The refused requests took no iid for good? GitLab's InternalId may skip; the next one is still opened.
    await api.put(`${base(project.id)}/1`, { state_event: 'close' });
    const afterClose = await api.post(base(project.id), { title: 'after close', source_branch: 'feature', target_branch: 'master' });
    expect(afterClose.status).toBe(201);
  });

  it("reads the view, the caller's subscription and the branch rules of the answer in one round trip", async () => {
    const { project } = await projectWithBranches();
    const created = await api.post(base(project.id), { title: 'Read together', source_branch: 'feature', target_branch: 'master' });
    expect(created.status).toBe(201);
    const trips = await roundTrips(api.handle, async () => {
      const shown = await api.get(`${base(project.id)}/${created.body.iid}`);
      expect(shown.body).toMatchObject({ subscribed: true, user: { can_merge: true } });
    });
    if (!api.handle.pool) return;
    const together = trips.filter((t) => t.some((s) => s.includes('merge_request_subscriptions')));
    expect(together).toHaveLength(1);
    expect(together[0]!.some((s) => s.includes('protected_branches'))).toBe(true);
    expect(together[0]!.some((s) => s.includes('from "users"'))).toBe(true);
    expect(trips.filter((t) => t.some((s) => s.includes('protected_branches')))).toHaveLength(1);
  });

  it('concurrent requests for the same branches open one merge request; the others are 409', async () => {
    const { project } = await projectWithBranches();
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) => api.post(base(project.id), { title: `race ${i}`, source_branch: 'feature', target_branch: 'master' })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409]);
    expect(await mrCount(project.id)).toBe(1);
  });

  it('concurrent requests for different branches open each one, with iids 1… in turn and a version of its own', async () => {
    const { project } = await projectWithBranches();
    for (let i = 0; i < 5; i++) await commit(project.id, { branch: `topic-${i}`, start_branch: 'master', commit_message: `Topic ${i}`, actions: [file(`t${i}.txt`, `${i}\n`)] });
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => api.post(base(project.id), { title: `topic ${i}`, source_branch: `topic-${i}`, target_branch: 'master' })));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201]);
    expect(answers.map((a) => a.body.iid).sort()).toEqual([1, 2, 3, 4, 5]);
    for (const [i, answer] of answers.entries()) {
      const versions = await api.get(`${base(project.id)}/${answer.body.iid}/versions`);
      expect(versions.body).toHaveLength(1);
      const version = await api.get(`${base(project.id)}/${answer.body.iid}/versions/${versions.body[0].id}`);
      expect(version.body.diffs.map((d: { new_path: string }) => d.new_path)).toEqual([`t${i}.txt`]);
    }
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(5);
  });

  it('a target project other than the project is not its fork (422); an unknown one is 404', async () => {
    const { project } = await projectWithBranches();
    const other = await createProject(api);
    const res = await api.post(base(project.id), { title: 't', source_branch: 'feature', target_branch: 'master', target_project_id: other.id });
    expect([res.status, res.body]).toEqual([422, { message: ['Source project is not a fork of the target project'] }]);
    const unknown = await api.post(base(project.id), { title: 't', source_branch: 'feature', target_branch: 'master', target_project_id: 99999999 });
    expect(unknown.status).toBe(404);
    const own = await api.post(base(project.id), { title: 't', source_branch: 'feature', target_branch: 'master', target_project_id: project.id });
    expect(own.status).toBe(201);
  });

  it('takes labels by name (created on first use), the project milestone, assignees who can read, and the flags', async () => {
    const { project } = await projectWithBranches();
    const milestone = (await api.post(`/projects/${project.id}/milestones`, { title: 'v1' })).body;
    const otherMilestone = (await api.post(`/projects/${(await createProject(api)).id}/milestones`, { title: 'elsewhere' })).body;
    const existing = (await api.post(`/projects/${project.id}/labels`, { name: 'bug', color: '#FF0000' })).body;
    const member = await api.createUser();
    await api.post(`/projects/${project.id}/members`, { user_id: member.user.id, access_level: 20 });
    const stranger = await api.createUser();

    const res = await api.post(base(project.id), {
      title: 'WIP: labelled',
      source_branch: 'feature',
      target_branch: 'master',
      labels: 'bug, feature ,bug,',
      milestone_id: milestone.id,
      assignee_ids: [member.user.id],
      remove_source_branch: true,
      allow_maintainer_to_push: true,
      squash: true,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      labels: ['bug', 'feature'],
      milestone: { id: milestone.id, title: 'v1' },
      assignees: [{ id: member.user.id }],
      assignee: { id: member.user.id },
      work_in_progress: true,
      force_remove_source_branch: true,
      squash: true,
    });
    // Entities::MergeRequestBasic shows allow_collaboration for merge requests from forks only (test/http/fork-merge-requests.test.ts).
    expect(res.body).not.toHaveProperty('allow_collaboration');
    expect(res.body).not.toHaveProperty('allow_maintainer_to_push');
    const labels = (await api.get(`/projects/${project.id}/labels`)).body;
    expect(labels.map((l: any) => [l.name, l.color])).toEqual([
      ['bug', '#FF0000'],
      ['feature', '#428BCA'],
    ]);
    expect(labels[0].id).toBe(existing.id);

    // A stranger cannot read the private project's merge requests: left out (nobody left: no assignee);
    // a milestone of another project is none; assignee_id is the legacy single form.
    const second = await openOn(project.id, { assignee_ids: [stranger.user.id], milestone_id: otherMilestone.id });
    expect(second).toMatchObject({ assignees: [], assignee: null, milestone: null });
    const unknown = await openOn(project.id, { assignee_ids: [-5, 99999999] });
    expect(unknown.assignees).toEqual([]);
    const legacy = await openOn(project.id, { assignee_id: member.user.id, assignee_ids: [stranger.user.id] });
    expect(legacy.assignees.map((u: any) => u.id)).toEqual([member.user.id]);
    // Several assignees with the licence (starter, EE's multiple_merge_request_assignees); without it only the first one is taken.
    const rootId = (await api.get('/user')).body.id;
    const several = await openOn(project.id, { assignee_ids: [member.user.id, rootId] });
    expect(several.assignees.map((u: any) => u.id)).toEqual([member.user.id, rootId]);
    const free = await onPlan(api, 'free', () => openOn(project.id, { assignee_ids: [member.user.id, rootId] }));
    expect(free.assignees.map((u: any) => u.id)).toEqual([member.user.id]);
  });
});

describe('GET /projects/:id/merge_requests/:merge_request_iid', () => {
  it('shows one merge request; render_html, include_diverged_commits_count and include_rebase_in_progress add their fields', async () => {
    const { project } = await projectWithBranches();
    const mr = await openOn(project.id, { description: 'Line <one>\nline two\n\nPara' });
    const plain = await api.get(`${base(project.id)}/${mr.iid}`);
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual(mr);
    expect(plain.body).not.toHaveProperty('diverged_commits_count');
    expect(plain.body).not.toHaveProperty('title_html');
    expect(plain.body).not.toHaveProperty('rebase_in_progress');

    const extras = await api.get(`${base(project.id)}/${mr.iid}`, { query: { render_html: true, include_diverged_commits_count: true, include_rebase_in_progress: true } });
    expect(extras.body).toEqual({
      ...mr,
      merge_status: 'can_be_merged',
      diverged_commits_count: 0,
      title_html: mr.title,
      description_html: '<p dir="auto">Line &lt;one&gt;<br>\nline two</p>\n<p dir="auto">Para</p>',
      rebase_in_progress: false,
    });
    // Two commits land on master: the source branch is two behind its target.
    await commit(project.id, { branch: 'master', commit_message: 'm1', actions: [file('m1.txt', '1\n')] });
    await commit(project.id, { branch: 'master', commit_message: 'm2', actions: [file('m2.txt', '2\n')] });
    const behind = await api.get(`${base(project.id)}/${mr.iid}`, { query: { include_diverged_commits_count: 'true' } });
    expect(behind.body.diverged_commits_count).toBe(2);
  });

  it('404 for an unknown iid or another project\'s merge request, 400 for a non-integer iid', async () => {
    const { project } = await projectWithBranches();
    const other = await projectWithBranches();
    await openOn(other.project.id);
    expect((await api.get(`${base(project.id)}/1`)).body).toEqual({ message: '404 Not found' });
    expect((await api.get(`${base(project.id)}/99999999999`)).status).toBe(404);
    expect((await api.get(`${base(project.id)}/abc`)).body).toEqual({ error: 'merge_request_iid is invalid' });
    expect((await api.get(`${base(999999999)}/1`)).body).toEqual({ message: '404 Project Not Found' });
  });
});

describe('PUT /projects/:id/merge_requests/:merge_request_iid', () => {
  it('needs one of the updatable parameters; blank title or target branch is empty', async () => {
    const { project } = await projectWithBranches();
    const mr = await openOn(project.id);
    const none = await api.put(`${base(project.id)}/${mr.iid}`, { allow_collaboration: true });
    expect(none.status).toBe(400);
    expect(none.body).toEqual({
      error: 'assignee_id, assignee_ids, description, labels, milestone_id, remove_source_branch, state_event, target_branch, title, discussion_locked, squash are missing, at least one parameter must be provided',
    });
    expect((await api.put(`${base(project.id)}/${mr.iid}`, { title: '' })).body).toEqual({ error: 'title is empty' });
    expect((await api.put(`${base(project.id)}/${mr.iid}`, { title: '   ' })).body).toEqual({ error: 'title is empty' });
    expect((await api.put(`${base(project.id)}/${mr.iid}`, { state_event: 'merge' })).body).toEqual({ error: 'state_event does not have a valid value' });
    expect((await api.put(`${base(project.id)}/${mr.iid}`, { title: 'x'.repeat(256) })).body).toEqual({ message: { title: ['is too long (maximum is 255 characters)'] } });
    expect((await api.put(`${base(project.id)}/404`, { title: 'x' })).body).toEqual({ message: '404 Not found' });
    expect((await api.get(`${base(project.id)}/${mr.iid}`)).body).toEqual({ ...mr, merge_status: 'can_be_merged' });
  });

  it('changes what it is given and records only what changed; close and reopen with the activity feed', async () => {
    const { project } = await projectWithBranches();
    const mr = await openOn(project.id);
    const milestone = (await api.post(`/projects/${project.id}/milestones`, { title: 'v2' })).body;
    const res = await api.put(`${base(project.id)}/${mr.iid}`, {
      title: 'Renamed',
      description: 'Now described',
      labels: 'one,two',
      milestone_id: milestone.id,
      discussion_locked: true,
      squash: true,
      remove_source_branch: false,
      allow_collaboration: true,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      title: 'Renamed',
      description: 'Now described',
      labels: ['one', 'two'],
      milestone: { id: milestone.id },
      discussion_locked: true,
      squash: true,
      force_remove_source_branch: false,
      state: 'opened',
    });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(mr.updated_at));
    // The same values again: nothing to record but the flags GitLab saves anyway.
    const events = async () => (await api.events(`merge-request-${mr.id}`)).map((e) => e.type).filter((type) => type !== 'MergeRequestMergeStatusChecked');
    const before = await events();
    await api.put(`${base(project.id)}/${mr.iid}`, { title: 'Renamed', labels: 'two,one' });
    expect(await events()).toEqual(before);
    // milestone_id 0 and labels '' clear them.
    const cleared = await api.put(`${base(project.id)}/${mr.iid}`, { milestone_id: 0, labels: '' });
    expect(cleared.body).toMatchObject({ milestone: null, labels: [] });

    const closed = await api.put(`${base(project.id)}/${mr.iid}`, { state_event: 'close' });
    expect(closed.body).toMatchObject({ state: 'closed', closed_by: { username: 'root' }, closed_at: expect.any(String) });
    const closedAgain = await api.put(`${base(project.id)}/${mr.iid}`, { state_event: 'close' });
    expect(closedAgain.body).toEqual(closed.body);
    const reopened = await api.put(`${base(project.id)}/${mr.iid}`, { state_event: 'reopen' });
    expect(reopened.body).toMatchObject({ state: 'opened', closed_by: null, closed_at: null });

    const feed = (await api.get(`/projects/${project.id}/events`, { query: { target_type: 'merge_request', sort: 'asc' } })).body;
    expect(feed.map((e: any) => [e.action_name, e.target_iid, e.target_type, e.target_title])).toEqual([
      ['opened', mr.iid, 'MergeRequest', mr.title],
      ['closed', mr.iid, 'MergeRequest', 'Renamed'],
      ['opened', mr.iid, 'MergeRequest', 'Renamed'],
    ]);
  });

  it('a new target branch is checked (same branch 422, duplicate 409, missing 400) and takes a version against it', async () => {
    const { project, feature } = await projectWithBranches();
    const mr = await openOn(project.id);
    const other = await openOn(project.id);
    expect((await api.put(`${base(project.id)}/${mr.iid}`, { target_branch: mr.source_branch })).status).toBe(422);
    expect((await api.put(`${base(project.id)}/${mr.iid}`, { target_branch: 'nowhere' })).body).toEqual({ message: { target_branch: ['does not exist'] } });
    // `other` moves to target mr's source branch; then mr's own dup check applies the other way round.
    const develop = await api.post(`/projects/${project.id}/repository/branches`, { branch: 'develop', ref: 'master' });
    expect(develop.status).toBe(201);
    await commit(project.id, { branch: 'develop', commit_message: 'dev', actions: [file('dev.txt', 'd\n')] });
    const retargeted = await api.put(`${base(project.id)}/${mr.iid}`, { target_branch: 'develop' });
    expect(retargeted.status).toBe(200);
    expect(retargeted.body).toMatchObject({ target_branch: 'develop', sha: feature[1], merge_status: 'can_be_merged' });
    expect(retargeted.body.diff_refs.start_sha).toBe((await api.get(`/projects/${project.id}/repository/branches/develop`)).body.commit.id);
    expect((await api.events(`merge-request-${mr.id}`)).map((e) => e.type).filter((type) => type !== 'MergeRequestMergeStatusChecked')).toEqual(['MergeRequestOpened', 'MergeRequestUpdated', 'MergeRequestVersionRecorded']);
    // A second open merge request of the same branches is refused.
    await api.post(`/projects/${project.id}/repository/branches`, { branch: 'same-as-mr', ref: 'feature' });
    const dup = await api.put(`${base(project.id)}/${other.iid}`, { target_branch: 'develop' });
    expect(dup.status).toBe(200);
    const twin = await api.post(base(project.id), { title: 'twin', source_branch: mr.source_branch, target_branch: 'master' });
    expect(twin.status).toBe(201);
    const clash = await api.put(`${base(project.id)}/${twin.body.iid}`, { target_branch: 'develop' });
    expect([clash.status, clash.body]).toEqual([409, { message: [`Another open merge request already exists for this source branch: !${mr.iid}`] }]);
  });

  it('the author or an assignee may update without the role, but not the milestone, labels, assignees or lock', async () => {
    const { project } = await projectWithBranches();
    const reporter = await api.createUser();
    await api.post(`/projects/${project.id}/members`, { user_id: reporter.user.id, access_level: 20 });
    const mr = await openOn(project.id, { assignee_ids: [reporter.user.id] });
    const milestone = (await api.post(`/projects/${project.id}/milestones`, { title: 'v3' })).body;
    const res = await api.put(`${base(project.id)}/${mr.iid}`, { title: 'By the assignee', labels: 'x', milestone_id: milestone.id, assignee_ids: [0], discussion_locked: true }, { token: reporter.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: 'By the assignee', labels: [], milestone: null, assignees: [{ id: reporter.user.id }], discussion_locked: null });
    expect((await api.get(`/projects/${project.id}/labels`)).body).toEqual([]);
    // Not assigned any more: 403.
    await api.put(`${base(project.id)}/${mr.iid}`, { assignee_ids: [0] });
    expect((await api.put(`${base(project.id)}/${mr.iid}`, { title: 'again' }, { token: reporter.token })).status).toBe(403);
  });
});

describe('DELETE /projects/:id/merge_requests/:merge_request_iid', () => {
  it('deletes it (204); then 404; its iid is not handed out again', async () => {
    const { project } = await projectWithBranches();
    const mr = await openOn(project.id);
    const res = await api.del(`${base(project.id)}/${mr.iid}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get(`${base(project.id)}/${mr.iid}`)).status).toBe(404);
    expect((await api.del(`${base(project.id)}/${mr.iid}`)).status).toBe(404);
    expect((await api.del(`${base(project.id)}/x`)).body).toEqual({ error: 'merge_request_iid is invalid' });
    const next = await openOn(project.id);
    expect(next.iid).toBe(mr.iid + 1);
  });

  it('honours If-Unmodified-Since (412 when changed after it)', async () => {
    const { project } = await projectWithBranches();
    const mr = await openOn(project.id);
    const res = await api.del(`${base(project.id)}/${mr.iid}`, { headers: { 'If-Unmodified-Since': new Date(Date.parse(mr.updated_at) - 60_000).toUTCString() } });
    expect(res.status).toBe(412);
    expect((await api.get(`${base(project.id)}/${mr.iid}`)).status).toBe(200);
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'public';

// Every call needs a user (the spec: "Every call requires authentication"); a private project of
// others is 404; reporters (and, on a public project, anyone) read; developers open and update;
// only the owner (and admins) delete. Blocked users are refused at authentication.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'POST /projects/:id/merge_requests':                     { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 201, maintainer: 201, owner: 201, admin: 201, blocked: 403 }, public: { anonymous: 401, nonMember: 403, guest: 403, reporter: 403, developer: 201 } },
  'GET /projects/:id/merge_requests/:merge_request_iid':   { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200, guest: 200, reporter: 200 } },
  'PUT /projects/:id/merge_requests/:merge_request_iid':   { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 200, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, guest: 403, reporter: 403, developer: 200 } },
  'DELETE /projects/:id/merge_requests/:merge_request_iid': { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 204, admin: 204 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 403, maintainer: 403, owner: 204 } },
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      await commit(id, { branch: 'master', commit_message: 'Initial', actions: [file('README.md', 'hello\n')] });
      await commit(id, { branch: 'feature', start_branch: 'master', commit_message: 'Add a', actions: [file('a.txt', 'a\n')] });
      projects.set(visibility, id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const projectId = projects.get(visibility)!;
    const token = callers[caller].token;
    const [method] = endpoint.split(' ');
    if (method === 'POST') {
      const branch = `perm-${++branchCounter}`;
      await api.post(`/projects/${projectId}/repository/branches`, { branch, ref: 'feature' });
      const before = await mrCount(projectId);
      const res = await api.post(base(projectId), { title: 'perm', source_branch: branch, target_branch: 'master' }, { token });
      if (res.status !== 201) expect(await mrCount(projectId)).toBe(before);
      return res.status;
    }
    const mr = await openOn(projectId);
    const path = `${base(projectId)}/${mr.iid}`;
    if (method === 'GET') return (await api.get(path, { token })).status;
    if (method === 'PUT') {
      const res = await api.put(path, { title: 'changed' }, { token });
      expect((await api.get(path)).body.title).toBe(res.status === 200 ? 'changed' : mr.title);
      return res.status;
    }
    const res = await api.del(path, { token });
    expect((await api.get(path)).status).toBe(res.status === 204 ? 404 : 200);
    return res.status;
  });

  it('a guest of a private project is refused reading (403) even as the assignee: the merge requests feature needs reporter', async () => {
    const projectId = projects.get('private')!;
    const mr = await openOn(projectId, { assignee_ids: [callers.guest.user!.id] });
    // The guest cannot read the project's merge requests, so GitLab drops them as assignee.
    expect(mr.assignees).toEqual([]);
    expect((await api.get(`${base(projectId)}/${mr.iid}`, { token: callers.guest.token })).status).toBe(403);
  });
});
