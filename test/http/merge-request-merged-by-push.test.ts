import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/fixtures.js';
import { gitScratch, withToken } from '../support/git.js';
import { startMergeRequestWorld, type MergeRequestWorld } from '../support/merge-requests.js';

/**
 * A merge request merged by hand: a push to its target branch that brings its source head in
 * marks it merged, by the pusher, with the commit that brought the head in as its merge commit
 * (GitLab's MergeRequests::RefreshService#post_merge_manually_merged and
 * BranchPushMergeCommitAnalyzer).
 */

const { git, newDir, remove } = gitScratch('forgelog-merged-by-push-');

let world: MergeRequestWorld;
let projectId: number;
let cloneUrl: string;
beforeAll(async () => {
  world = await startMergeRequestWorld();
  projectId = world.projects.private;
  const project = await world.api.get(`/projects/${projectId}`);
  cloneUrl = withToken(project.body.http_url_to_repo, world.callers.owner.token!);
});
afterAll(async () => {
  await world.api.close();
  remove();
});

const mr = async (iid: number) => (await world.api.get(`/projects/${projectId}/merge_requests/${iid}`)).body;
/** The merge request once a reaction to the push has closed it (the refresh is asynchronous). */
const mergedMr = (iid: number) => eventually(async () => ((await mr(iid)).state === 'merged' ? mr(iid) : undefined));
const headOf = async (branch: string) => (await world.api.get(`/projects/${projectId}/repository/branches/${branch}`)).body.commit.id as string;

async function clone(): Promise<string> {
  const dir = newDir();
  await git(['clone', '-q', cloneUrl, dir]);
  return dir;
}

describe('a push to the target branch that brings the source head in', () => {
  it('merges the merge request, by the pusher, with the head itself as the merge commit when it fast-forwards', async () => {
    const iid = await world.mergeRequest(projectId, 'Fast forward by hand');
    const { source_branch, sha } = await mr(iid);
    const dir = await clone();
    await git(['push', '-q', 'origin', `origin/${source_branch}:refs/heads/master`], dir);

    expect(await headOf('master')).toBe(sha);
    const merged = await mergedMr(iid);
    expect(merged).toMatchObject({ state: 'merged', merge_commit_sha: sha, merged_by: { id: world.callers.owner.user!.id } });
    expect(merged.merged_at).not.toBeNull();
    const merges = (await world.api.events(`merge-request-${merged.id}`)).filter((e) => e.type === 'MergeRequestMerged');
    expect(merges).toHaveLength(1);
    expect(merges[0]!.data).toMatchObject({ by_id: world.callers.owner.user!.id, merge_commit_sha: sha, squash_commit_sha: null });
    // The activity shows it accepted, as an API merge.
    const activity = await world.api.get(`/projects/${projectId}/events`, { query: { action: 'merged' } });
    expect(activity.body.map((e: { target_iid: number; action_name: string }) => [e.target_iid, e.action_name])).toContainEqual([iid, 'accepted']);
  });

  it('takes the merge commit that brought the head in when it was merged with a merge commit', async () => {
    const iid = await world.mergeRequest(projectId, 'Merged with a merge commit');
    const { source_branch, sha } = await mr(iid);
    const dir = await clone();
    await git(['merge', '-q', '--no-ff', '-m', 'Merge by hand', `origin/${source_branch}`], dir);
    const mergeCommit = (await git(['rev-parse', 'HEAD'], dir)).trim();
    // A later commit on top: the merge commit is the one that brought the head in, not the tip.
    await git(['commit', '-q', '--allow-empty', '-m', 'After the merge'], dir);
    await git(['push', '-q', 'origin', 'master'], dir);

    expect(await mergedMr(iid)).toMatchObject({ state: 'merged', merge_commit_sha: mergeCommit, sha });
  });

  it('leaves open the merge requests whose head the push does not bring', async () => {
    const untouched = await world.mergeRequest(projectId, 'Not merged');
    const dir = await clone();
    await git(['commit', '-q', '--allow-empty', '-m', 'Unrelated'], dir);
    await git(['push', '-q', 'origin', 'master'], dir);
    await world.api.runtime.worker!.waitUntilCaughtUp(); // the push's refresh has run
    expect(await mr(untouched)).toMatchObject({ state: 'opened', merge_commit_sha: null, merged_by: null });
  });
});
