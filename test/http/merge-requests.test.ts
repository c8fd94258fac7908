import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
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
      merge_status: 'unchecked',
      sha: feature[1],
      merge_commit_sha: null,
      squash_commit_sha: null,
      discussion_locked: null,
      should_remove_source_branch: null,
      force_remove_source_branch: false,
      allow_collaboration: false,
      allow_maintainer_to_push: false,
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
    });
    expect((await api.events(`merge-request-${res.body.id}`)).map((e) => e.type)).toEqual(['MergeRequestOpened']);
  });
});
