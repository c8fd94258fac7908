import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** GitLab 12's repository reads: the commits of every ref (`all`), the file routes' X-Gitlab-* headers and HEAD. */

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

describe('GET and HEAD /projects/:id/repository/files/:file_path(/raw)', () => {
  it("send GitLab 12's X-Gitlab-* headers (set_http_headers(blob_data)); HEAD answers them with no body", async () => {
    const project = await createProject(api);
    const first = await commitTo(project.id, { branch: 'master', commit_message: 'Guide', actions: [create('docs/guide.md', '# Guide\n'), create('docs/ünï.md', 'u')] });
    const head = await commitTo(project.id, { branch: 'master', commit_message: 'Other', actions: [create('b.txt', 'b')] });
    const file = await api.get(repo(project.id, '/files/docs%2Fguide.md'), { query: { ref: 'master' } });
    expect(file.status).toBe(200);
    const expected = {
      'x-gitlab-file-name': 'guide.md',
      'x-gitlab-file-path': 'docs/guide.md',
      'x-gitlab-size': '8',
      'x-gitlab-encoding': 'base64',
      'x-gitlab-content-sha256': file.body.content_sha256,
      'x-gitlab-ref': 'master',
      'x-gitlab-blob-id': file.body.blob_id,
      'x-gitlab-commit-id': head,
      'x-gitlab-last-commit-id': first,
    };
    expect(file.body).toMatchObject({ commit_id: head, last_commit_id: first, size: 8 });
    const gitlabHeaders = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => name.startsWith('x-gitlab-')));
    expect(gitlabHeaders(file.headers)).toEqual(expected);
    for (const path of ['/files/docs%2Fguide.md', '/files/docs%2Fguide.md/raw']) {
      const res = await api.request('HEAD', repo(project.id, path), { query: { ref: 'master' } });
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect(gitlabHeaders(res.headers)).toEqual(expected);
    }
    const raw = await api.get(repo(project.id, '/files/docs%2Fguide.md/raw'), { query: { ref: 'master' } });
    expect(raw.text).toBe('# Guide\n');
    expect(gitlabHeaders(raw.headers)).toEqual(expected);
    // A name beyond Latin-1 goes out as its UTF-8 bytes, as Rack sends it.
    const unicode = await api.request('HEAD', repo(project.id, '/files/docs%2F%C3%BCn%C3%AF.md'), { query: { ref: head.slice(0, 8) } });
    expect(unicode.status).toBe(200);
    expect(Buffer.from(unicode.headers.get('x-gitlab-file-name')!, 'latin1').toString('utf8')).toBe('ünï.md');
    expect(unicode.headers.get('x-gitlab-ref')).toBe(head.slice(0, 8));
    const missing = await api.request('HEAD', repo(project.id, '/files/none.txt'), { query: { ref: 'master' } });
    expect(missing.status).toBe(404);
    expect(missing.text).toBe('');
    expect(gitlabHeaders(missing.headers)).toEqual({});
  });
});

describe('GET and HEAD /projects/:id/repository/files/:file_path/blame', () => {
  it("answers GitLab's BlameRange runs — each commit as Entities::BlameRangeCommit with its lines — with the file's headers; HEAD the headers alone", async () => {
    const project = await createProject(api);
    const first = await commitTo(project.id, { branch: 'master', commit_message: 'Poem\n\nFirst draft.', actions: [create('poem.txt', 'one\ntwo\nthree\nfour\n')] });
    const second = await commitTo(project.id, { branch: 'master', commit_message: 'Edit', actions: [{ action: 'update', file_path: 'poem.txt', content: 'one\nTWO\nthree\nfour\nfive' }] });
    await commitTo(project.id, { branch: 'master', commit_message: 'Elsewhere', actions: [create('other.txt', 'x')] });
    const res = await api.get(repo(project.id, '/files/poem.txt/blame'), { query: { ref: 'master' } });
    expect(res.status).toBe(200);
    const commit = (await api.get(repo(project.id, `/commits/${first}`))).body;
    expect(res.body).toEqual([
      {
        commit: {
          id: first,
          parent_ids: [],
          message: 'Poem\n\nFirst draft.',
          authored_date: commit.authored_date,
          author_name: commit.author_name,
          author_email: commit.author_email,
          committed_date: commit.committed_date,
          committer_name: commit.committer_name,
          committer_email: commit.committer_email,
        },
        lines: ['one'],
      },
      { commit: expect.objectContaining({ id: second, parent_ids: [first], message: 'Edit' }), lines: ['TWO'] },
      { commit: expect.objectContaining({ id: first }), lines: ['three', 'four'] },
      { commit: expect.objectContaining({ id: second }), lines: ['five'] },
    ]);
    expect(res.headers.get('x-gitlab-last-commit-id')).toBe(second);
    const head = await api.request('HEAD', repo(project.id, '/files/poem.txt/blame'), { query: { ref: 'master' } });
    expect([head.status, head.text, head.headers.get('x-gitlab-file-path')]).toEqual([200, '', 'poem.txt']);
    expect(await api.get(repo(project.id, `/files/poem.txt/blame`), { query: { ref: first } })).toMatchObject({ status: 200, body: [{ commit: { id: first }, lines: ['one', 'two', 'three', 'four'] }] });
    expect(await api.get(repo(project.id, '/files/none.txt/blame'), { query: { ref: 'master' } })).toMatchObject({ status: 404, body: { message: '404 File Not Found' } });
    expect(await api.get(repo(project.id, '/files/poem.txt/blame'), { query: { ref: 'nowhere' } })).toMatchObject({ status: 404, body: { message: '404 Commit Not Found' } });
    expect(await api.get(repo(project.id, '/files/poem.txt/blame'))).toMatchObject({ status: 400, body: { error: 'ref is missing' } });
  });
});
