import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createProject, eventually, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * GET /projects/:id/merge_requests/:merge_request_iid/merge_ref (GitLab 12.x: API::MergeRequests
 * `merge_ref`, MergeabilityCheckService#execute(recheck: true), MergeToRefService).
 */

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const repo = (projectId: number, rest = '') => `/projects/${projectId}/repository${rest}`;
const mergeRef = (projectId: number, iid: number, token?: string | null) => api.get(`/projects/${projectId}/merge_requests/${iid}/merge_ref`, token === undefined ? {} : { token });

async function commit(projectId: number, branch: string, path: string, content: string, extra: Record<string, unknown> = {}, token?: string) {
  const exists = (await api.get(repo(projectId, `/files/${encodeURIComponent(path)}`), { query: { ref: branch } })).status === 200;
  const res = await api.post(repo(projectId, '/commits'), { branch, commit_message: `write ${path}`, actions: [{ action: exists ? 'update' : 'create', file_path: path, content }], ...extra }, token ? { token } : {});
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

/** A public project with master (README.md, a.txt) and an open merge request from `feature`, by a developer. */
async function withMergeRequest(featureContent = 'b\n') {
  const project = await createProject(api, { visibility: 'public', initialize_with_readme: true });
  const master = await commit(project.id, 'master', 'a.txt', 'one\ntwo\nthree\n');
  const author = await api.createUser();
  await addMember(api, 'projects', project.id, author.user.id, 30);
  const feature = await commit(project.id, 'feature', 'b.txt', featureContent, { start_branch: 'master' }, author.token);
  const mr = await api.post(`/projects/${project.id}/merge_requests`, { title: 'Feature', source_branch: 'feature', target_branch: 'master' }, { token: author.token });
  expect(mr.status).toBe(201);
  // The reactor's check recorded (a GET answers an unchecked one by checking it, without recording).
  const checked = async () => (await api.events(`merge-request-${mr.body.id}`)).some((e) => e.type === 'MergeRequestMergeStatusChecked' && (e.data as { merge_status: string }).merge_status === 'can_be_merged');
  await eventually(async () => ((await checked()) ? true : undefined));
  return { project, author, master, feature, mr: mr.body as { id: number; iid: number; sha: string } };
}

const refEvents = async (mrId: number) => (await api.events(`merge-request-${mrId}`)).filter((e) => e.type === 'MergeRequestMergeRefUpdated');

describe('GET …/merge_ref', () => {
  it('makes the merge commit of the source head into the target head, by the author, and answers it again while the heads stand', async () => {
    const { project, author, master, feature, mr } = await withMergeRequest();
    const res = await mergeRef(project.id, mr.iid);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['commit_id']);
    const made = (await api.get(repo(project.id, `/commits/${res.body.commit_id}`))).body;
    expect(made).toMatchObject({
      parent_ids: [master, feature],
      message: `Merge branch 'feature' into 'master'\n\nFeature\n\nSee merge request ${project.path_with_namespace}!${mr.iid}`,
      author_name: author.user.name,
      committer_name: author.user.name,
    });
    // The merged tree: both files.
    const tree = ((await api.get(repo(project.id, '/tree'), { query: { ref: res.body.commit_id } })).body as any[]).map((e) => e.path);
    expect(tree).toEqual(['README.md', 'a.txt', 'b.txt']);
    // No branch moved.
    expect((await api.get(repo(project.id, '/branches/master'))).body.commit.id).toBe(master);
    expect((await refEvents(mr.id)).map((e) => e.data)).toEqual([{ id: mr.id, project_id: project.id, iid: mr.iid, commit_sha: res.body.commit_id, target_sha: master, source_sha: feature }]);

    // Anyone who may read the merge request gets the same ref while the heads stand; nothing is written again.
    expect((await mergeRef(project.id, mr.iid, null)).body).toEqual(res.body);
    expect((await mergeRef(project.id, mr.iid)).body).toEqual(res.body);
    expect(await refEvents(mr.id)).toHaveLength(1);

    // The target moves: a new merge ref on the new head.
    const moved = await commit(project.id, 'master', 'c.txt', 'c\n');
    const again = await mergeRef(project.id, mr.iid);
    expect(again.status).toBe(200);
    expect(again.body.commit_id).not.toBe(res.body.commit_id);
    expect((await api.get(repo(project.id, `/commits/${again.body.commit_id}`))).body.parent_ids).toEqual([moved, feature]);
    expect(await refEvents(mr.id)).toHaveLength(2);

    // Merged: the last merge ref stays its answer.
    expect((await api.put(`/projects/${project.id}/merge_requests/${mr.iid}/merge`, {})).status).toBe(200);
    expect((await mergeRef(project.id, mr.iid)).body).toEqual(again.body);
  });

  it('is 400 when the heads conflict, when the author may not merge, and for a closed one without a merge ref', async () => {
    const conflicting = await withMergeRequest();
    await commit(conflicting.project.id, 'master', 'b.txt', 'other\n');
    const res = await mergeRef(conflicting.project.id, conflicting.mr.iid);
    expect([res.status, res.body]).toEqual([400, { message: 'Merge request is not mergeable' }]);
    expect((await api.get(`/projects/${conflicting.project.id}/merge_requests/${conflicting.mr.iid}`)).body.merge_status).toBe('cannot_be_merged');
    expect(await refEvents(conflicting.mr.id)).toEqual([]);

    // MergeToRefService runs as the author: a reporter now, who may not merge.
    const demoted = await withMergeRequest();
    expect((await api.put(`/projects/${demoted.project.id}/members/${demoted.author.user.id}`, { access_level: 20 })).status).toBe(200);
    expect((await mergeRef(demoted.project.id, demoted.mr.iid)).body).toEqual({ message: 'Merge request is not mergeable' });

    const closed = await withMergeRequest();
    expect((await api.put(`/projects/${closed.project.id}/merge_requests/${closed.mr.iid}`, { state_event: 'close' })).status).toBe(200);
    expect((await mergeRef(closed.project.id, closed.mr.iid)).body).toEqual({ message: 'Merge ref cannot be updated' });
  });

  it('answers 404 for who may not read the merge request, and for an unknown one; 400 for a bad iid', async () => {
    const project = await createProject(api, { visibility: 'private', initialize_with_readme: true });
    await commit(project.id, 'feature', 'b.txt', 'b\n', { start_branch: 'master' });
    const mr = (await api.post(`/projects/${project.id}/merge_requests`, { title: 'Private', source_branch: 'feature', target_branch: 'master' })).body;
    const stranger = await api.createUser();
    expect((await mergeRef(project.id, mr.iid, null)).body).toEqual({ message: '404 Project Not Found' });
    expect((await mergeRef(project.id, mr.iid, stranger.token)).body).toEqual({ message: '404 Project Not Found' });
    expect((await mergeRef(project.id, 999)).body).toEqual({ message: '404 Not found' });
    expect((await mergeRef(project.id, 'x' as unknown as number)).body).toEqual({ error: 'merge_request_iid is invalid' });
    expect((await mergeRef(project.id, mr.iid)).status).toBe(200);
  });
});
