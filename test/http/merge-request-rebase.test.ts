import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/fixtures.js';
import { startMergeRequestWorld, type MergeRequestWorld } from '../support/merge-requests.js';
import type { Role } from '../support/roles.js';

/**
 * PUT /projects/:id/merge_requests/:merge_request_iid/rebase (GitLab 12's API::MergeRequests
 * `rebase` and MergeRequests::RebaseService): the source's commits replayed onto the target's
 * head, committed by the caller; a conflict leaves the branch and sets merge_error.
 */

let world: MergeRequestWorld;
beforeAll(async () => {
  world = await startMergeRequestWorld();
});
afterAll(async () => {
  await world.api.close();
});

const mrPath = (projectId: number, iid: number) => `/projects/${projectId}/merge_requests/${iid}`;
const commitTo = async (projectId: number, branch: string, action: 'create' | 'update', path: string, content: string, message = `${action} ${path}`) => {
  const made = await world.api.post(`/projects/${projectId}/repository/commits`, { branch, commit_message: message, actions: [{ action, file_path: path, content }] });
  expect(made.status).toBe(201);
  return made.body.id as string;
};
const branchHead = async (projectId: number, branch: string) => (await world.api.get(`/projects/${projectId}/repository/branches/${branch}`)).body.commit.id as string;
const commit = async (projectId: number, sha: string) => (await world.api.get(`/projects/${projectId}/repository/commits/${sha}`)).body;

describe('rebasing a merge request', () => {
  it('replays the source commits onto the target head, keeping author and message, committed by the caller', async () => {
    const project = world.projects.private;
    const iid = await world.mergeRequest(project, 'Rebase me');
    const before = (await world.api.get(mrPath(project, iid))).body;
    const original = await commit(project, before.sha);
    const target = await commitTo(project, 'master', 'create', `later-${iid}.txt`, 'later\n');

    const res = await world.api.put(`${mrPath(project, iid)}/rebase`, {}, { token: world.author.token });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ rebase_in_progress: false });

    const head = await branchHead(project, before.source_branch);
    expect(head).not.toBe(before.sha);
    const rebased = await commit(project, head);
    expect(rebased).toMatchObject({
      parent_ids: [target],
      message: original.message,
      author_name: original.author_name,
      author_email: original.author_email,
      authored_date: original.authored_date,
      committer_name: 'Mr Author',
    });
    // The refresh gives the merge request a version of the new head on the new base.
    const after = await eventually(async () => {
      const mr = (await world.api.get(mrPath(project, iid))).body;
      return mr.sha === head ? mr : undefined;
    });
    expect(after.diff_refs).toMatchObject({ base_sha: target, head_sha: head });
    expect(after.merge_error).toBeNull();
    const changes = (await world.api.get(`${mrPath(project, iid)}/changes`)).body.changes.map((c: { new_path: string }) => c.new_path);
    expect(changes).toEqual([`${before.source_branch}.txt`]);
  });

  it('leaves a source that already has the target head as it is', async () => {
    const project = world.projects.private;
    const iid = await world.mergeRequest(project, 'Up to date');
    const before = (await world.api.get(mrPath(project, iid))).body;
    const res = await world.api.put(`${mrPath(project, iid)}/rebase`, { skip_ci: true }, { token: world.author.token });
    expect(res.status).toBe(202);
    expect(await branchHead(project, before.source_branch)).toBe(before.sha);
    const types = (await world.api.events(`merge-request-${before.id}`)).map((e) => e.type);
    expect(types).not.toContain('MergeRequestRebaseFailed');
  });

  it('sets merge_error and leaves the branch when a change conflicts', async () => {
    const project = world.projects.private;
    const branch = `conflicting-${Date.now()}`;
    const created = await world.api.post(`/projects/${project}/repository/branches`, { branch, ref: 'master' });
    expect(created.status).toBe(201);
    const sourceHead = await commitTo(project, branch, 'update', 'README.md', 'ours\n');
    const mr = await world.api.post(`/projects/${project}/merge_requests`, { title: 'Conflicts', source_branch: branch, target_branch: 'master' }, { token: world.author.token });
    expect(mr.status).toBe(201);
    await commitTo(project, 'master', 'update', 'README.md', 'theirs\n');

    const res = await world.api.put(`${mrPath(project, mr.body.iid)}/rebase`, {}, { token: world.author.token });
    expect(res.status).toBe(202);
    expect(await branchHead(project, branch)).toBe(sourceHead);
    expect((await world.api.get(mrPath(project, mr.body.iid))).body.merge_error).toBe('Rebase failed. Please rebase locally');
    const failed = (await world.api.events(`merge-request-${mr.body.id}`)).filter((e) => e.type === 'MergeRequestRebaseFailed');
    expect(failed.map((e) => e.data.merge_error)).toEqual(['Rebase failed. Please rebase locally']);
  });

  it('answers GitLab’s refusals: 401, 404 for who cannot read it, 403 without push to the source, 409 once closed or merged', async () => {
    const project = world.projects.private;
    const iid = await world.mergeRequest(project, 'Guarded');
    const expected: Partial<Record<Role, number>> = { anonymous: 401, nonMember: 404, guest: 404, reporter: 403, developer: 202, maintainer: 202, admin: 202 };
    for (const [role, status] of Object.entries(expected)) {
      const res = await world.api.put(`${mrPath(project, iid)}/rebase`, {}, { token: world.callers[role as Role].token });
      expect([role, res.status]).toEqual([role, status]);
      if (status === 403) expect(res.body).toEqual({ message: '403 Forbidden - Cannot push to source branch' });
    }
    expect((await world.api.put(`${mrPath(project, 999999)}/rebase`, {}, { token: world.author.token })).status).toBe(404);
    expect((await world.api.put(`${mrPath(project, iid)}/rebase`, { skip_ci: 'maybe' }, { token: world.author.token })).body).toEqual({ error: 'skip_ci is invalid' });

    const gone = await world.mergeRequest(project, 'Branch gone');
    const source = (await world.api.get(mrPath(project, gone))).body.source_branch;
    expect((await world.api.del(`/projects/${project}/repository/branches/${source}`)).status).toBe(204);
    const missing = await world.api.put(`${mrPath(project, gone)}/rebase`, {}, { token: world.author.token });
    expect(missing.status).toBe(403);
    expect(missing.body).toEqual({ message: '403 Forbidden - Source branch does not exist' });

    const closed = await world.mergeRequest(project, 'Closed');
    expect((await world.api.put(mrPath(project, closed), { state_event: 'close' }, { token: world.author.token })).status).toBe(200);
    // GitLab: MergeRequest#rebase_async raises StaleObjectError unless open, which the API answers as a resource lock.
    const lock = { message: '409 Conflict: Resource lock' };
    expect(await world.api.put(`${mrPath(project, closed)}/rebase`, {}, { token: world.author.token })).toMatchObject({ status: 409, body: lock });
    const merged = await world.mergeRequest(project, 'Merged');
    expect((await world.api.put(`${mrPath(project, merged)}/merge`, {})).status).toBe(200);
    expect(await world.api.put(`${mrPath(project, merged)}/rebase`, {}, { token: world.author.token })).toMatchObject({ status: 409, body: lock });
  });
});
