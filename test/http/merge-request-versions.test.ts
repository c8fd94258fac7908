import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takeVersion } from '../../src/commands/merge-requests.js';
import { createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { roundTrips } from '../support/round-trips.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { run } from '../../src/commands/kernel/run.js';
import { mergeRequests } from '../../src/domain/merge-requests/aggregate.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const base = (projectId: number) => `/projects/${projectId}/merge_requests`;
const commit = async (projectId: number, body: Record<string, unknown>) => {
  const res = await api.post(`/projects/${projectId}/repository/commits`, body);
  if (res.status !== 201) throw new Error(`commit: ${res.status} ${res.text}`);
  return res.body as { id: string; short_id: string; created_at: string; title: string; message: string; author_name: string; author_email: string; authored_date: string; committer_name: string; committer_email: string; committed_date: string; web_url: string; parent_ids: string[] };
};
const action = (kind: string, path: string, content?: string, extra: Record<string, unknown> = {}) => ({ action: kind, file_path: path, ...(content === undefined ? {} : { content }), ...extra });
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * master: README.md, keep.txt (5 lines), gone.txt, old-name.txt. feature, two commits: one
 * modifies keep.txt's third line and deletes gone.txt, the other renames old-name.txt and
 * adds new.txt.
 */
async function projectWithFeature() {
  const project = await createProject(api);
  const master = await commit(project.id, {
    branch: 'master',
    commit_message: 'Initial',
    actions: [action('create', 'README.md', 'hello\n'), action('create', 'keep.txt', 'one\ntwo\nthree\nfour\nfive\n'), action('create', 'gone.txt', 'bye\n'), action('create', 'old-name.txt', 'same\n')],
  });
  const first = await commit(project.id, {
    branch: 'feature',
    start_branch: 'master',
    commit_message: 'Change keep, drop gone\n\nWith a body.',
    actions: [action('update', 'keep.txt', 'one\ntwo\nTHREE\nfour\nfive\n'), action('delete', 'gone.txt')],
  });
  const second = await commit(project.id, {
    branch: 'feature',
    commit_message: 'Rename and add',
    actions: [action('move', 'new-name.txt', undefined, { previous_path: 'old-name.txt' }), action('create', 'new.txt', 'fresh\n')],
  });
  return { project, master, first, second };
}

const open = async (projectId: number, sourceBranch = 'feature') => {
  const res = await api.post(base(projectId), { title: 'Feature', source_branch: sourceBranch, target_branch: 'master' });
  if (res.status !== 201) throw new Error(`open: ${res.status} ${res.text}`);
  return res.body as { id: number; iid: number; sha: string };
};

/** MergeRequests::RefreshService's new version after a push (what mrmerge's reactor records), by the command. */
async function recordVersion(projectId: number, mergeRequestId: number, sourceBranch = 'feature') {
  const ctx = api.runtime.app.commands;
  const head = async (name: string) => (await api.get(`/projects/${projectId}/repository/branches/${name}`)).body.commit.id as string;
  const [source, target] = [await head(sourceBranch), await head('master')];
  await run({ ctx, metadata: { actor_id: null, actor_username: null } }, mergeRequests, mergeRequestId, async (trx) => ({ type: 'RecordVersion', version: await takeVersion(trx, projectId, source, target) }));
}

/** Entities::Commit of a merge request's commit: the commit's own, with no parents (CachedCommit). */
const asVersionCommit = (c: Awaited<ReturnType<typeof commit>>) => ({
  id: c.id,
  short_id: c.short_id,
  created_at: c.created_at,
  parent_ids: [],
  title: c.title,
  message: c.message,
  author_name: c.author_name,
  author_email: c.author_email,
  authored_date: c.authored_date,
  committer_name: c.committer_name,
  committer_email: c.committer_email,
  committed_date: c.committed_date,
  web_url: c.web_url,
});

const FEATURE_DIFFS = [
  { old_path: 'gone.txt', new_path: 'gone.txt', a_mode: '100644', b_mode: '0', new_file: false, renamed_file: false, deleted_file: true, diff: '@@ -1 +0,0 @@\n-bye\n' },
  { old_path: 'keep.txt', new_path: 'keep.txt', a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: false, deleted_file: false, diff: '@@ -1,5 +1,5 @@\n one\n two\n-three\n+THREE\n four\n five\n' },
  { old_path: 'old-name.txt', new_path: 'new-name.txt', a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: true, deleted_file: false, diff: '' },
  { old_path: 'new.txt', new_path: 'new.txt', a_mode: '0', b_mode: '100644', new_file: true, renamed_file: false, deleted_file: false, diff: '@@ -0,0 +1 @@\n+fresh\n' },
];

describe('GET /projects/:id/merge_requests/:merge_request_iid/versions', () => {
  it('lists the versions, newest first, as Entities::MergeRequestDiff with pagination headers', async () => {
    const { project, master, second } = await projectWithFeature();
    const mr = await open(project.id);
    const res = await api.get(`${base(project.id)}/${mr.iid}/versions`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id: expect.any(Number), head_commit_sha: second.id, base_commit_sha: master.id, start_commit_sha: master.id, created_at: expect.stringMatching(ISO), merge_request_id: mr.id, state: 'collected', real_size: '4' },
    ]);
    expect(res.headers.get('x-total')).toBe('1');
    expect(res.headers.get('x-page')).toBe('1');
    expect(res.headers.get('x-per-page')).toBe('20');
  });

  it('has two versions after a push to the source branch, the new one first; a page of one', async () => {
    const { project, master, second } = await projectWithFeature();
    const mr = await open(project.id);
    const third = await commit(project.id, { branch: 'feature', commit_message: 'More', actions: [action('create', 'more.txt', 'more\n')] });
    await recordVersion(project.id, mr.id);
    const res = await api.get(`${base(project.id)}/${mr.iid}/versions`);
    expect(res.body.map((v: any) => [v.head_commit_sha, v.base_commit_sha, v.start_commit_sha, v.real_size, v.state])).toEqual([
      [third.id, master.id, master.id, '5', 'collected'],
      [second.id, master.id, master.id, '4', 'collected'],
    ]);
    expect(res.body[0].id).toBeGreaterThan(res.body[1].id);
    const page2 = await api.get(`${base(project.id)}/${mr.iid}/versions`, { query: { per_page: 1, page: 2 } });
    expect(page2.body).toEqual([res.body[1]]);
    expect(page2.headers.get('x-total')).toBe('2');
    expect(page2.headers.get('x-total-pages')).toBe('2');
    expect(page2.headers.get('x-prev-page')).toBe('1');
    // The merge request itself follows its latest version.
    const got = (await api.get(`${base(project.id)}/${mr.iid}`)).body;
    expect([got.sha, got.changes_count, got.diff_refs]).toEqual([third.id, '5', { base_sha: master.id, head_sha: third.id, start_sha: master.id }]);
  });

  it('a new version against a target that moved: start moves, the base stays the merge base', async () => {
    const { project, master, second } = await projectWithFeature();
    const mr = await open(project.id);
    const onMaster = await commit(project.id, { branch: 'master', commit_message: 'Master moves', actions: [action('create', 'other.txt', 'x\n')] });
    await commit(project.id, { branch: 'feature', commit_message: 'Touch', actions: [action('update', 'new.txt', 'fresh\nagain\n')] });
    await recordVersion(project.id, mr.id);
    const [latest] = (await api.get(`${base(project.id)}/${mr.iid}/versions`)).body;
    expect([latest.base_commit_sha, latest.start_commit_sha]).toEqual([master.id, onMaster.id]);
    const full = (await api.get(`${base(project.id)}/${mr.iid}/versions/${latest.id}`)).body;
    // other.txt is master's change, not the merge request's: the diff is from the merge base.
    expect(full.diffs.map((d: any) => d.new_path)).toEqual(['gone.txt', 'keep.txt', 'new-name.txt', 'new.txt']);
    expect(full.diffs[3].diff).toBe('@@ -0,0 +1,2 @@\n+fresh\n+again\n');
    expect(full.commits.map((c: any) => c.title)).toEqual(['Touch', 'Rename and add', 'Change keep, drop gone']);
    expect(second.id).toBe(full.commits[1].id);
  });

  it('answers 404 for an unknown merge request, 400 for a non-integer iid or page', async () => {
    const { project } = await projectWithFeature();
    const mr = await open(project.id);
    expect(await api.get(`${base(project.id)}/${mr.iid + 1}/versions`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get(`${base(project.id)}/x/versions`)).toMatchObject({ status: 400, body: { error: 'merge_request_iid is invalid' } });
    expect(await api.get(`${base(project.id)}/x/versions`, { query: { page: 'y' } })).toMatchObject({ status: 400, body: { error: 'merge_request_iid is invalid, page is invalid' } });
    expect((await api.get(`${base(project.id)}/99999999999/versions`)).status).toBe(404);
    expect((await api.get(`/projects/999999/merge_requests/${mr.iid}/versions`)).body).toEqual({ message: '404 Project Not Found' });
  });
});

describe('GET /projects/:id/merge_requests/:merge_request_iid/versions/:version_id', () => {
  it('answers Entities::MergeRequestDiffFull: commits newest first, diffs base → head (modify, delete, rename, create)', async () => {
    const { project, master, first, second } = await projectWithFeature();
    const mr = await open(project.id);
    const [version] = (await api.get(`${base(project.id)}/${mr.iid}/versions`)).body;
    const res = await api.get(`${base(project.id)}/${mr.iid}/versions/${version.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: version.id,
      head_commit_sha: second.id,
      base_commit_sha: master.id,
      start_commit_sha: master.id,
      created_at: version.created_at,
      merge_request_id: mr.id,
      state: 'collected',
      real_size: '4',
      commits: [asVersionCommit(second), asVersionCommit(first)],
      diffs: FEATURE_DIFFS,
    });
    expect(res.body.commits[1].message).toBe('Change keep, drop gone\n\nWith a body.');
    expect(res.body.commits[1].title).toBe('Change keep, drop gone');
  });

  it('an older version keeps its own commits and diffs after a push', async () => {
    const { project, second } = await projectWithFeature();
    const mr = await open(project.id);
    await commit(project.id, { branch: 'feature', commit_message: 'More', actions: [action('update', 'keep.txt', 'one\ntwo\nTHREE\nfour\nfive\nsix\n')] });
    await recordVersion(project.id, mr.id);
    const [latest, older] = (await api.get(`${base(project.id)}/${mr.iid}/versions`)).body;
    const old = (await api.get(`${base(project.id)}/${mr.iid}/versions/${older.id}`)).body;
    expect(old.head_commit_sha).toBe(second.id);
    expect(old.commits.map((c: any) => c.id)).toEqual([second.id, expect.any(String)]);
    expect(old.diffs).toEqual(FEATURE_DIFFS);
    const now = (await api.get(`${base(project.id)}/${mr.iid}/versions/${latest.id}`)).body;
    expect(now.commits.map((c: any) => c.title)).toEqual(['More', 'Rename and add', 'Change keep, drop gone']);
    expect(now.diffs[1]).toEqual({ ...FEATURE_DIFFS[1], diff: '@@ -1,5 +1,6 @@\n one\n two\n-three\n+THREE\n four\n five\n+six\n' });
  });

  it('answers 404 for a version of another merge request or none, 400 for a non-integer version_id', async () => {
    const { project } = await projectWithFeature();
    const mr = await open(project.id);
    await api.post(`/projects/${project.id}/repository/branches`, { branch: 'other', ref: 'feature' });
    const other = await open(project.id, 'other');
    const [otherVersion] = (await api.get(`${base(project.id)}/${other.iid}/versions`)).body;
    expect(await api.get(`${base(project.id)}/${mr.iid}/versions/${otherVersion.id}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect((await api.get(`${base(project.id)}/${mr.iid}/versions/0`)).status).toBe(404);
    expect((await api.get(`${base(project.id)}/${mr.iid}/versions/99999999999`)).status).toBe(404);
    expect(await api.get(`${base(project.id)}/${mr.iid}/versions/v1`)).toMatchObject({ status: 400, body: { error: 'version_id is invalid' } });
    expect(await api.get(`${base(project.id)}/${mr.iid + 5}/versions/${otherVersion.id}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });

  it('a version whose source has no commits of its own is empty, real_size null', async () => {
    const project = await createProject(api);
    await commit(project.id, { branch: 'master', commit_message: 'Initial', actions: [action('create', 'README.md', 'hello\n')] });
    await api.post(`/projects/${project.id}/repository/branches`, { branch: 'same', ref: 'master' });
    const mr = await open(project.id, 'same');
    const [version] = (await api.get(`${base(project.id)}/${mr.iid}/versions`)).body;
    expect([version.state, version.real_size]).toEqual(['empty', null]);
    const full = (await api.get(`${base(project.id)}/${mr.iid}/versions/${version.id}`)).body;
    expect([full.commits, full.diffs]).toEqual([[], []]);
    expect((await api.get(`${base(project.id)}/${mr.iid}/commits`)).body).toEqual([]);
    expect((await api.get(`${base(project.id)}/${mr.iid}/changes`)).body.changes).toEqual([]);
  });
});

describe('round trips', () => {
  /** The round trip that sends a statement naming `table` together with the merge request's read (the workers' reads may come between). */
  const tripWith = (trips: string[][], table: string) => trips.find((t) => t.some((s) => s.includes(`"${table}"`)) && t.some((s) => /from "merge_requests" where/.test(s)));

  it('a version: the merge request, the version, its files and its commits in one round trip', async () => {
    const { project } = await projectWithFeature();
    const mr = await open(project.id);
    const [version] = (await api.get(`${base(project.id)}/${mr.iid}/versions`)).body;
    await settled(api);
    const trips = await roundTrips(api.handle, async () => {
      const res = await api.get(`${base(project.id)}/${mr.iid}/versions/${version.id}`);
      expect([res.status, res.body.commits.length, res.body.diffs]).toEqual([200, 2, FEATURE_DIFFS]);
    });
    if (!api.handle.pool) return;
    const together = tripWith(trips, 'merge_request_version_diffs');
    expect(together).toBeDefined();
    expect(together!.some((s) => s.includes('"repository_objects"'))).toBe(true);
    expect(together!.some((s) => s.includes('merge_request_versions'))).toBe(true);
  });

  it('a version read again: its commits as rendered before, with no commit read; a moved project renders them anew', async () => {
    const { project } = await projectWithFeature();
    const mr = await open(project.id);
    const [version] = (await api.get(`${base(project.id)}/${mr.iid}/versions`)).body;
    const path = `${base(project.id)}/${mr.iid}/versions/${version.id}`;
    const first = await api.get(path);
    await settled(api);
    let again: Awaited<ReturnType<typeof api.get>> | undefined;
    const trips = await roundTrips(api.handle, async () => void (again = await api.get(path)));
    expect([again!.status, again!.text]).toEqual([200, first.text]);
    expect(trips.flat().filter((s) => s.includes('"repository_objects"'))).toEqual([]);
    // The commits' web_url names the project's path: after a rename, the new one.
    expect((await api.put(`/projects/${project.id}`, { path: `${project.path}-moved` })).status).toBe(200);
    const moved = (await api.get(path)).body;
    expect(moved.commits.map((commit: any) => commit.web_url)).toEqual(first.body.commits.map((commit: any) => commit.web_url.replace(`/${project.path}/`, `/${project.path}-moved/`)));
    expect(moved.commits[0].web_url).toContain(`/${project.path}-moved/-/commit/`);
  });

  it("the commits and the changes: the merge request and its latest version's commits or files in one round trip", async () => {
    const { project } = await projectWithFeature();
    const mr = await open(project.id);
    await settled(api);
    const commits = await roundTrips(api.handle, async () => expect((await api.get(`${base(project.id)}/${mr.iid}/commits`)).body).toHaveLength(2));
    const changes = await roundTrips(api.handle, async () => expect((await api.get(`${base(project.id)}/${mr.iid}/changes`)).body.changes).toEqual(FEATURE_DIFFS));
    if (!api.handle.pool) return;
    expect(tripWith(commits, 'merge_request_versions')).toBeDefined();
    expect(tripWith(changes, 'merge_request_version_diffs')).toBeDefined();
  });
});

describe('GET /projects/:id/merge_requests/:merge_request_iid/commits', () => {
  it("answers the latest version's commits, newest first, paginated", async () => {
    const { project, first, second } = await projectWithFeature();
    const mr = await open(project.id);
    const res = await api.get(`${base(project.id)}/${mr.iid}/commits`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([asVersionCommit(second), asVersionCommit(first)]);
    expect(res.headers.get('x-total')).toBe('2');
    const page = await api.get(`${base(project.id)}/${mr.iid}/commits`, { query: { per_page: 1, page: 2 } });
    expect(page.body).toEqual([asVersionCommit(first)]);
    expect(page.headers.get('x-total-pages')).toBe('2');
    const third = await commit(project.id, { branch: 'feature', commit_message: 'Third', actions: [action('create', 'c.txt', 'c\n')] });
    await recordVersion(project.id, mr.id);
    expect((await api.get(`${base(project.id)}/${mr.iid}/commits`)).body.map((c: any) => c.id)).toEqual([third.id, second.id, first.id]);
    expect((await api.get(`${base(project.id)}/x/commits`)).body).toEqual({ error: 'merge_request_iid is invalid' });
    expect((await api.get(`${base(project.id)}/${mr.iid + 1}/commits`)).status).toBe(404);
  });
});

describe('GET /projects/:id/merge_requests/:merge_request_iid/changes', () => {
  it('answers the single merge request entity plus `changes` (no `overflow` in 12.x)', async () => {
    const { project } = await projectWithFeature();
    const mr = await open(project.id);
    const single = (await api.get(`${base(project.id)}/${mr.iid}`)).body;
    const res = await api.get(`${base(project.id)}/${mr.iid}/changes`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...single, changes: FEATURE_DIFFS });
    expect(res.body.changes_count).toBe('4');
    expect(Object.keys(res.body)).not.toContain('overflow');
    expect((await api.get(`${base(project.id)}/${mr.iid + 1}/changes`)).body).toEqual({ message: '404 Not found' });
  });

  it("follows the latest version after a push, and keeps a merged-away branch's diff when the branch is gone", async () => {
    const { project } = await projectWithFeature();
    const mr = await open(project.id);
    await commit(project.id, { branch: 'feature', commit_message: 'Drop new', actions: [action('delete', 'new.txt')] });
    await recordVersion(project.id, mr.id);
    const after = (await api.get(`${base(project.id)}/${mr.iid}/changes`)).body;
    expect(after.changes).toEqual([FEATURE_DIFFS[0], FEATURE_DIFFS[1], FEATURE_DIFFS[2]]);
    expect(after.changes_count).toBe('3');
    expect((await api.del(`/projects/${project.id}/repository/branches/feature`)).status).toBe(204);
    expect((await api.get(`${base(project.id)}/${mr.iid}/changes`)).body.changes).toEqual([FEATURE_DIFFS[0], FEATURE_DIFFS[1], FEATURE_DIFFS[2]]);
  });

  it('a patch of 100 KB or more is listed with an empty diff', async () => {
    const project = await createProject(api);
    await commit(project.id, { branch: 'master', commit_message: 'Initial', actions: [action('create', 'README.md', 'hello\n')] });
    const big = Array.from({ length: 3000 }, (_, i) => `line ${i} ${'x'.repeat(30)}`).join('\n') + '\n';
    await commit(project.id, { branch: 'feature', start_branch: 'master', commit_message: 'Big', actions: [action('create', 'big.txt', big), action('create', 'small.txt', 's\n')] });
    const mr = await open(project.id);
    const { changes } = (await api.get(`${base(project.id)}/${mr.iid}/changes`)).body;
    expect(changes.map((d: any) => [d.new_path, d.diff])).toEqual([['big.txt', ''], ['small.txt', '@@ -0,0 +1 @@\n+s\n']]);
  });

  it('a version of more than 1,000 files keeps the first 1,000 and is overflow, real_size "1000+"', async () => {
    const project = await createProject(api);
    await commit(project.id, { branch: 'master', commit_message: 'Initial', actions: [action('create', 'README.md', 'hello\n')] });
    const actions = Array.from({ length: 1001 }, (_, i) => action('create', `many/f${String(i).padStart(4, '0')}.txt`, `${i}\n`));
    await commit(project.id, { branch: 'feature', start_branch: 'master', commit_message: 'Many', actions });
    const mr = await open(project.id);
    const [version] = (await api.get(`${base(project.id)}/${mr.iid}/versions`)).body;
    expect([version.state, version.real_size]).toEqual(['overflow', '1000+']);
    const { changes } = (await api.get(`${base(project.id)}/${mr.iid}/changes`)).body;
    expect(changes).toHaveLength(1000);
    expect(changes.at(-1).new_path).toBe('many/f0999.txt');
  });

  it('a NUL past the first 8,000 bytes is text to git: the patch keeps it', async () => {
    const project = await createProject(api);
    await commit(project.id, { branch: 'master', commit_message: 'Initial', actions: [action('create', 'README.md', 'hello\n')] });
    const text = `${'a\n'.repeat(4500)}x\u0000y\n`;
    await commit(project.id, { branch: 'feature', start_branch: 'master', commit_message: 'Late NUL', actions: [action('create', 'late.txt', Buffer.from(text).toString('base64'), { encoding: 'base64' })] });
    const mr = await open(project.id);
    const { changes } = (await api.get(`${base(project.id)}/${mr.iid}/changes`)).body;
    expect(changes).toHaveLength(1);
    expect(changes[0].diff.endsWith('+x\u0000y\n')).toBe(true);
  });
});

describe("a version's stored diff (merge_request_version_diffs)", () => {
  const stored = async (versionId: number) =>
    (await api.handle.db.selectFrom('merge_request_version_diffs').select('files').where('version_id', '=', versionId).executeTakeFirst())?.files;

  it('is written with the version, in its transaction, and is what changes and the version answer', async () => {
    const { project } = await projectWithFeature();
    const mr = await open(project.id);
    const [version] = (await api.get(`${base(project.id)}/${mr.iid}/versions`)).body;
    expect(await stored(version.id)).toEqual(FEATURE_DIFFS);
    await commit(project.id, { branch: 'feature', commit_message: 'Drop new', actions: [action('delete', 'new.txt')] });
    await recordVersion(project.id, mr.id);
    const [latest] = (await api.get(`${base(project.id)}/${mr.iid}/versions`)).body;
    expect(await stored(latest.id)).toEqual(FEATURE_DIFFS.slice(0, 3));
    expect(await stored(version.id)).toEqual(FEATURE_DIFFS);
  });

  it('a refused command stores none: opening a duplicate merge request takes a version and rolls it back', async () => {
    const { project } = await projectWithFeature();
    await open(project.id);
    const count = async () => Number((await api.handle.db.selectFrom('merge_request_version_diffs').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
    const before = await count();
    const res = await api.post(base(project.id), { title: 'Again', source_branch: 'feature', target_branch: 'master' });
    expect(res.status).toBe(409);
    expect(await count()).toBe(before);
  });

  it('a version taken before diffs were stored (a database from before migration 0054) is diffed from the repository', async () => {
    const { project } = await projectWithFeature();
    const mr = await open(project.id);
    const [version] = (await api.get(`${base(project.id)}/${mr.iid}/versions`)).body;
    const paths = [`${base(project.id)}/${mr.iid}/changes`, `${base(project.id)}/${mr.iid}/versions/${version.id}`];
    const fromStored = await Promise.all(paths.map(async (path) => (await api.get(path)).text));
    // The one write behind the API's back here: an older forgelog left no row for this version.
    await api.handle.db.deleteFrom('merge_request_version_diffs').where('version_id', '=', version.id).execute();
    expect((await api.get(`${base(project.id)}/${mr.iid}/changes`)).body.changes).toEqual(FEATURE_DIFFS);
    expect((await api.get(`${base(project.id)}/${mr.iid}/versions/${version.id}`)).body.diffs).toEqual(FEATURE_DIFFS);
    // The stored files' text goes into the answers as stored (jsonWithMembers): the same bytes as
    // the files computed and rendered, Entities::Diff's members in its order.
    expect(await Promise.all(paths.map(async (path) => (await api.get(path)).text))).toEqual(fromStored);
    expect(Object.keys(JSON.parse(fromStored[1]!).diffs[0])).toEqual(['old_path', 'new_path', 'a_mode', 'b_mode', 'new_file', 'renamed_file', 'deleted_file', 'diff']);
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'public';

// find_merge_request_with_access: read_merge_request. Every call needs a user; a private project
// of others is 404; a guest of a private project is refused (the merge requests feature needs
// reporter); on a public project anyone signed in reads.
// API::MergeRequests: `authenticate_non_get!` — anonymous callers read a public project's, and find no private one.
const READ = { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200, blocked: 403 }, public: { anonymous: 200, nonMember: 200, guest: 200, reporter: 200 } };
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/merge_requests/:merge_request_iid/versions': READ,
  'GET /projects/:id/merge_requests/:merge_request_iid/versions/:version_id': READ,
  'GET /projects/:id/merge_requests/:merge_request_iid/commits': READ,
  'GET /projects/:id/merge_requests/:merge_request_iid/changes': READ,
};

describe('permissions', () => {
  let callers: Callers;
  const fixtures = new Map<Visibility, { projectId: number; iid: number; versionId: number }>();
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'public'] as const) {
      const projectId = await sourceWithRoles(api, callers, 'projects', visibility);
      await commit(projectId, { branch: 'master', commit_message: 'Initial', actions: [action('create', 'README.md', 'hello\n')] });
      await commit(projectId, { branch: 'feature', start_branch: 'master', commit_message: 'Add a', actions: [action('create', 'a.txt', 'a\n')] });
      const mr = await open(projectId);
      const [version] = (await api.get(`${base(projectId)}/${mr.iid}/versions`)).body;
      fixtures.set(visibility, { projectId, iid: mr.iid, versionId: version.id });
    }
  });

  it("reads nothing of a version for a caller the project refuses: the merge request alone, then 403", async () => {
    const { projectId, iid, versionId } = fixtures.get('private')!;
    const trips = await roundTrips(api.handle, async () => {
      expect((await api.get(`${base(projectId)}/${iid}/versions/${versionId}`, { token: callers.guest.token })).status).toBe(403);
      expect((await api.get(`${base(projectId)}/${iid}/changes`, { token: callers.guest.token })).status).toBe(403);
    });
    if (!api.handle.pool) return;
    expect(trips.some((t) => t.some((s) => /from "merge_requests" where/.test(s)))).toBe(true);
    expect(trips.filter((t) => t.some((s) => /merge_request_version_diffs|"repository_objects"/.test(s)))).toEqual([]);
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const { projectId, iid, versionId } = fixtures.get(visibility)!;
    const path = endpoint
      .replace('GET ', '')
      .replace(':id', String(projectId))
      .replace(':merge_request_iid', String(iid))
      .replace(':version_id', String(versionId));
    const res = await api.get(path, { token: callers[caller].token });
    // What a reader gets: the version, the commit, the diff of a.txt; a refusal shows none of it.
    const shown = endpoint.endsWith('/versions') ? '"state":"collected"' : endpoint.endsWith('/commits') ? '"title":"Add a"' : '"new_path":"a.txt"';
    expect(JSON.stringify(res.body).includes(shown)).toBe(res.status === 200);
    return res.status;
  });
});
