import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** GitLab 12's repository reads: the commits of every ref (`all`). */

let api: TestServer;
let clock = new Date('2020-03-01T10:00:00Z');
beforeAll(async () => {
  api = await startTestServer({}, { now: () => clock });
});
afterAll(() => api.close());

const repo = (projectId: number, rest = '') => `/projects/${projectId}/repository${rest}`;
const create = (path: string, content: string) => ({ action: 'create', file_path: path, content });
const tick = () => (clock = new Date(clock.getTime() + 60_000));

async function commitTo(projectId: number, body: Record<string, unknown>): Promise<string> {
  tick();
  const res = await api.post(repo(projectId, '/commits'), body);
  expect(res.status).toBe(201);
  return res.body.id;
}

describe('GET /projects/:id/repository/commits', () => {
  it('all=true lists the commits of every branch, newest first, each page in reverse (git log --all --reverse); ref_name is ignored', async () => {
    const project = await createProject(api);
    const c0 = await commitTo(project.id, { branch: 'master', commit_message: 'C0', actions: [create('a.txt', '0')] });
    const c1 = await commitTo(project.id, { branch: 'master', commit_message: 'C1', actions: [{ action: 'update', file_path: 'a.txt', content: '1' }] });
    const s1 = await commitTo(project.id, { branch: 'side', start_branch: 'master', commit_message: 'S1', actions: [create('s.txt', 's')] });
    const c2 = await commitTo(project.id, { branch: 'master', commit_message: 'C2', actions: [create('b.txt', 'b')] });
    expect((await api.post(repo(project.id, '/branches'), { branch: 'old', ref: c0 })).status).toBe(201);
    const o1 = await commitTo(project.id, { branch: 'old', commit_message: 'O1', actions: [create('o.txt', 'o')] });
    const ids = (res: { body: { id: string }[] }) => res.body.map((c) => c.id);

    expect(ids(await api.get(repo(project.id, '/commits')))).toEqual([c2, c1, c0]);
    const all = await api.get(repo(project.id, '/commits'), { query: { all: true } });
    expect(all.status).toBe(200);
    // GitLab: Gitaly's FindCommits runs `git log --all --reverse --skip --max-count`: the page is chosen, then reversed.
    expect(ids(all)).toEqual([c0, c1, s1, c2, o1]);
    expect(all.headers.get('x-total')).toBe('5');
    expect(ids(await api.get(repo(project.id, '/commits'), { query: { all: true, ref_name: 'side' } }))).toEqual([c0, c1, s1, c2, o1]);
    const page1 = await api.get(repo(project.id, '/commits'), { query: { all: 'true', per_page: 2 } });
    expect(ids(page1)).toEqual([c2, o1]);
    expect(page1.headers.get('x-total-pages')).toBe('3');
    expect(ids(await api.get(repo(project.id, '/commits'), { query: { all: true, per_page: 2, page: 2 } }))).toEqual([c1, s1]);
    expect(ids(await api.get(repo(project.id, '/commits'), { query: { all: true, per_page: 2, page: 3 } }))).toEqual([c0]);
    expect(ids(await api.get(repo(project.id, '/commits'), { query: { all: true, path: 'a.txt' } }))).toEqual([c0, c1]);
    expect(ids(await api.get(repo(project.id, '/commits'), { query: { all: false, ref_name: 'side' } }))).toEqual([s1, c1, c0]);
    expect(await api.get(repo(project.id, '/commits'), { query: { all: 'maybe' } })).toMatchObject({ status: 400, body: { error: 'all is invalid' } });
    const empty = await createProject(api);
    expect((await api.get(repo(empty.id, '/commits'), { query: { all: true } })).body).toEqual([]);
  });
});
