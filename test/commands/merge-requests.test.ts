import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMergeRequest, updateMergeRequest } from '../../src/commands/merge-requests.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

const metadata = { actor_id: 1, actor_username: 'root' };

describe('the merge requests aggregate', () => {
  it('opens with a version of the source against the target, and allocates iids per project', async () => {
    const project = (await api.post('/projects', { name: 'mr-command', initialize_with_readme: true })).body;
    const commit = await api.post(`/projects/${project.id}/repository/commits`, {
      branch: 'feature',
      start_branch: 'master',
      commit_message: 'Add a file',
      actions: [{ action: 'create', file_path: 'a.txt', content: 'a\n' }],
    });
    expect(commit.status).toBe(201);
    const ctx = api.runtime.app.commands;
    const input = { projectId: project.id, sourceProjectId: project.id, authorId: 1, title: 'Add a', sourceBranch: 'feature', targetBranch: 'master', fields: {} };
    const id = await openMergeRequest({ ctx, metadata }, input);
    const db = api.runtime.app.db;
    const row = await db.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const master = (await api.get(`/projects/${project.id}/repository/branches/master`)).body.commit.id;
    expect(row).toMatchObject({ iid: 1, state: 'opened', head_sha: commit.body.id, base_sha: master, start_sha: master, changes_count: 1, merge_status: 'can_be_merged' });
    const versions = await db.selectFrom('merge_request_versions').selectAll().where('merge_request_id', '=', id).execute();
    expect(versions).toMatchObject([{ head_commit_sha: commit.body.id, commit_shas: [commit.body.id], files_count: 1 }]);

    await expect(openMergeRequest({ ctx, metadata }, input)).rejects.toMatchObject({ code: 'conflict', messages: ['Another open merge request already exists for this source branch: !1'] });
    await updateMergeRequest({ ctx, metadata }, { id, projectId: project.id, sourceProjectId: project.id, sourceBranch: 'feature', targetBranch: 'master', fields: {}, stateEvent: 'close', byId: 1 });
    const second = await openMergeRequest({ ctx, metadata }, input);
    // The refused opening took no iid: GitLab's InternalId is allocated in the same transaction.
    expect((await db.selectFrom('merge_requests').select('iid').where('id', '=', second).executeTakeFirstOrThrow()).iid).toBe(2);
    await expect(updateMergeRequest({ ctx, metadata }, { id, projectId: project.id, sourceProjectId: project.id, sourceBranch: 'feature', targetBranch: 'master', fields: {}, stateEvent: 'reopen', byId: 1 })).rejects.toMatchObject({
      code: 'conflict',
      messages: ['Another open merge request already exists for this source branch: !2'],
    });
  });
});
