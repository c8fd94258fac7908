import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { roundTrips } from '../support/round-trips.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Iids (src/commands/kernel/iids.ts): a creation reads its scope's last iid under the scope's
 * lock until the process knows the next one, then guesses it and proves the guess with its
 * append; a wrong guess is decided again, reading. Issues and merge requests stand for every
 * counter.
 */
let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const issues = (projectId: number) => `/projects/${projectId}/issues`;
const openIssue = async (projectId: number, body: Record<string, unknown> = {}) => {
  const res = await api.post(issues(projectId), { title: 'An issue', ...body });
  expect(res.status).toBe(201);
  return res.body.iid as number;
};
const issueIids = async (projectId: number) => ((await api.get(issues(projectId), { query: { per_page: 100 } })).body as { iid: number }[]).map((i) => i.iid).sort((a, b) => a - b);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('iids', () => {
  it('a creation after one that read its iid guesses the next: the lock and its proof go in the append’s round trip', async () => {
    const project = await createProject(api);
    expect(await openIssue(project.id)).toBe(1);
    // A reference makes the cross-references projector read a result: that opening's statements go one by one, the next one's do not.
    expect(await openIssue(project.id, { description: 'Follows #1' })).toBe(2);
    let iid = 0;
    const trips = await roundTrips(api.handle, async () => {
      iid = await openIssue(project.id);
    });
    expect(iid).toBe(3);
    if (!api.handle.pool) return;
    expect(trips.filter((t) => t.some((s) => s.includes('as last_iid')))).toEqual([]);
    const proof = trips.filter((t) => t.some((s) => s.includes('pg_advisory_xact_lock_shared')));
    expect(proof).toHaveLength(1);
    expect(proof[0]!.filter((s) => /^select (pg_advisory_xact_lock|1 \/ \(coalesce)/.test(s))).toHaveLength(3);
    expect(proof[0]!.some((s) => /insert into "events"/.test(s))).toBe(true);
    expect(proof[0]!.at(-1)).toBe('commit');
  });

  it('a wrong guess (an iid set by hand) is found under the lock, and the creation reads its iid instead', async () => {
    const project = await createProject(api);
    expect(await openIssue(project.id)).toBe(1);
    expect(await openIssue(project.id)).toBe(2);
    // The process guesses 3 next; an administrator's issue takes 50 (`iid`, set_issue_iid).
    expect(await openIssue(project.id, { iid: 50 })).toBe(50);
    expect(await openIssue(project.id)).toBe(51);
    expect(await openIssue(project.id)).toBe(52);
    expect(await issueIids(project.id)).toEqual([1, 2, 50, 51, 52]);
  });

  it('concurrent creations in one scope take each iid once, reading and then guessing', async () => {
    const project = await createProject(api);
    for (const round of [0, 1, 2]) {
      const iids = await Promise.all(Array.from({ length: 8 }, () => openIssue(project.id)));
      expect(iids.sort((a, b) => a - b)).toEqual(range(round * 8 + 1, round * 8 + 8));
    }
    expect(await issueIids(project.id)).toEqual(range(1, 24));
  });

  it('a refused merge request after a guessed iid leaves no gap: the next opening’s guess is wrong, and it reads', async () => {
    const project = await createProject(api);
    await api.post(`/projects/${project.id}/repository/commits`, { branch: 'master', commit_message: 'Initial', actions: [{ action: 'create', file_path: 'README.md', content: 'hi\n' }] });
    for (const branch of ['a', 'b', 'c']) {
      const res = await api.post(`/projects/${project.id}/repository/commits`, { branch, start_branch: 'master', commit_message: branch, actions: [{ action: 'create', file_path: `${branch}.txt`, content: `${branch}\n` }] });
      expect(res.status).toBe(201);
    }
    const open = (source: string) => api.post(`/projects/${project.id}/merge_requests`, { title: source, source_branch: source, target_branch: 'master' });
    expect((await open('a')).body.iid).toBe(1);
    expect((await open('b')).body.iid).toBe(2);
    // Guessed 3, and refused: an open merge request of the same branches exists.
    const refused = await open('b');
    expect([refused.status, refused.body]).toEqual([409, { message: ['Another open merge request already exists for this source branch: !2'] }]);
    expect((await open('c')).body.iid).toBe(3);
    const listed = (await api.get(`/projects/${project.id}/merge_requests`, { query: { sort: 'asc' } })).body as { iid: number; source_branch: string }[];
    expect(listed.map((m) => [m.iid, m.source_branch])).toEqual([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]);
  });

  it('merge requests opened side by side take each iid once, those that began before the next was known guessing it late', async () => {
    const project = await createProject(api);
    await api.post(`/projects/${project.id}/repository/commits`, { branch: 'master', commit_message: 'Initial', actions: [{ action: 'create', file_path: 'README.md', content: 'hi\n' }] });
    const branches = range(1, 16).map((i) => `topic-${i}`);
    for (const branch of branches) {
      const res = await api.post(`/projects/${project.id}/repository/commits`, { branch, start_branch: 'master', commit_message: branch, actions: [{ action: 'create', file_path: `${branch}.txt`, content: `${branch}\n` }] });
      expect(res.status).toBe(201);
    }
    const open = (source: string) => api.post(`/projects/${project.id}/merge_requests`, { title: source, source_branch: source, target_branch: 'master' });
    for (const round of [0, 1]) {
      const answers = await Promise.all(branches.slice(round * 8, round * 8 + 8).map(open));
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
      expect(answers.map((a) => a.body.iid as number).sort((a, b) => a - b)).toEqual(range(round * 8 + 1, round * 8 + 8));
    }
    const made = await api.post(`/projects/${project.id}/repository/commits`, { branch: 'last', start_branch: 'master', commit_message: 'last', actions: [{ action: 'create', file_path: 'last.txt', content: 'last\n' }] });
    expect(made.status).toBe(201);
    let iid = 0;
    const last = await roundTrips(api.handle, async () => {
      iid = (await open('last')).body.iid;
    });
    expect(iid).toBe(17);
    if (!api.handle.pool) return;
    // The heads, the version's id and the guessed iid's own lock: the opening's first round trip.
    const first = last.find((t) => t.some((s) => s.includes('for share') && s.includes('repository_branches')));
    expect(first!.some((s) => s.includes('merge_request_versions_id_seq'))).toBe(true);
    expect(first!.some((s) => /pg_advisory_xact_lock\(hashtextextended/.test(s))).toBe(true);
  });
});
