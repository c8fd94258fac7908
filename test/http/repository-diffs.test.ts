import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const repo = (projectId: number, rest = '') => `/projects/${projectId}/repository${rest}`;
async function commitTo(projectId: number, branch: string, actions: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  const res = await api.post(repo(projectId, '/commits'), { branch, commit_message: `on ${branch}`, actions, ...extra });
  if (res.status !== 201) throw new Error(`commit: ${res.status} ${res.text}`);
  return res.body as { id: string; web_url: string };
}
const action = (kind: string, path: string, content?: string, more: Record<string, unknown> = {}) => ({ action: kind, file_path: path, ...(content === undefined ? {} : { content }), ...more });

describe('GET /projects/:id/repository/commits/:sha/diff', () => {
  let project: { id: number };
  let first: { id: string };
  let second: { id: string };
  beforeAll(async () => {
    project = await createProject(api);
    first = await commitTo(project.id, 'master', [action('create', 'app.rb', 'class App\n  def run\n    1\n  end\nend\n'), action('create', 'bin/tool', 'echo\n'), action('create', 'old.txt', 'keep me\n')]);
    second = await commitTo(project.id, 'master', [
      action('update', 'app.rb', 'class App\n  def run\n    2\n  end\nend\n'),
      action('chmod', 'bin/tool', undefined, { execute_filemode: true }),
      action('move', 'new.txt', undefined, { previous_path: 'old.txt' }),
      action('create', 'logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]).toString('base64'), { encoding: 'base64' }),
      action('create', 'tail.txt', 'no newline'),
    ]);
  });

  it("lists a commit's changes against its parent as Entities::Diff, in git's path order", async () => {
    const res = await api.get(repo(project.id, `/commits/${second.id}/diff`));
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { old_path: 'app.rb', new_path: 'app.rb', a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: false, deleted_file: false, diff: '@@ -1,5 +1,5 @@\n class App\n   def run\n-    1\n+    2\n   end\n end\n' },
      { old_path: 'bin/tool', new_path: 'bin/tool', a_mode: '100644', b_mode: '100755', new_file: false, renamed_file: false, deleted_file: false, diff: '' },
      { old_path: 'logo.png', new_path: 'logo.png', a_mode: '0', b_mode: '100644', new_file: true, renamed_file: false, deleted_file: false, diff: 'Binary files /dev/null and b/logo.png differ\n' },
      { old_path: 'old.txt', new_path: 'new.txt', a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: true, deleted_file: false, diff: '' },
      { old_path: 'tail.txt', new_path: 'tail.txt', a_mode: '0', b_mode: '100644', new_file: true, renamed_file: false, deleted_file: false, diff: '@@ -0,0 +1 @@\n+no newline\n\\ No newline at end of file\n' },
    ]);
    expect(res.headers.get('x-total')).toBe('5');
  });

  it('diffs a root commit against the empty tree, takes a branch name, and paginates', async () => {
    const root = await api.get(repo(project.id, `/commits/${first.id}/diff`), { query: { per_page: 2, page: 2 } });
    expect(res(root)).toEqual([200, '3', '2']);
    expect(root.body).toEqual([{ old_path: 'old.txt', new_path: 'old.txt', a_mode: '0', b_mode: '100644', new_file: true, renamed_file: false, deleted_file: false, diff: '@@ -0,0 +1 @@\n+keep me\n' }]);
    const byBranch = await api.get(repo(project.id, '/commits/master/diff'));
    expect(byBranch.body).toEqual((await api.get(repo(project.id, `/commits/${second.id}/diff`))).body);
  });

  it('answers 404 Commit Not Found for an unknown SHA or ref', async () => {
    for (const sha of ['0000000000000000000000000000000000000000', 'nope']) {
      const res = await api.get(repo(project.id, `/commits/${sha}/diff`));
      expect([res.status, res.body]).toEqual([404, { message: '404 Commit Not Found' }]);
    }
  });

  it('refuses a bad page as Grape does', async () => {
    const res = await api.get(repo(project.id, `/commits/${second.id}/diff`), { query: { per_page: 'x' } });
    expect([res.status, res.body]).toEqual([400, { error: 'per_page is invalid' }]);
  });
});

const res = (r: { status: number; headers: Headers }) => [r.status, r.headers.get('x-total'), r.headers.get('x-page')];

describe('GET /projects/:id/repository/compare', () => {
  let project: { id: number };
  let base: { id: string };
  let f1: { id: string };
  let f2: { id: string };
  let m1: { id: string };
  let webUrl: string;
  beforeAll(async () => {
    project = await createProject(api);
    webUrl = (await api.get(`/projects/${project.id}`)).body.web_url;
    base = await commitTo(project.id, 'master', [action('create', 'a.txt', 'a\n'), action('create', 'b.txt', 'b\n')]);
    f1 = await commitTo(project.id, 'feature', [action('update', 'a.txt', 'a feature\n')], { start_branch: 'master' });
    f2 = await commitTo(project.id, 'feature', [action('create', 'c.txt', 'c\n')]);
    m1 = await commitTo(project.id, 'master', [action('update', 'b.txt', 'b master\n')]);
  });

  const commitOf = async (sha: string) => {
    const { stats: _stats, status: _status, project_id: _p, last_pipeline: _l, ...commit } = (await api.get(repo(project.id, `/commits/${sha}`))).body;
    return commit;
  };

  it("compares from the merge base (`git diff from...to`): the target's own changes are not in the diff", async () => {
    const res = await api.get(repo(project.id, '/compare'), { query: { from: 'master', to: 'feature' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      commit: await commitOf(f2.id),
      commits: [await commitOf(f1.id), await commitOf(f2.id)],
      diffs: [
        { old_path: 'a.txt', new_path: 'a.txt', a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: false, deleted_file: false, diff: '@@ -1 +1 @@\n-a\n+a feature\n' },
        { old_path: 'c.txt', new_path: 'c.txt', a_mode: '0', b_mode: '100644', new_file: true, renamed_file: false, deleted_file: false, diff: '@@ -0,0 +1 @@\n+c\n' },
      ],
      compare_timeout: false,
      compare_same_ref: false,
    });
    expect(res.body.commit.web_url).toBe(`${webUrl}/-/commit/${f2.id}`);
  });

  it('with straight=true compares the two trees (`git diff from to`)', async () => {
    const res = await api.get(repo(project.id, '/compare'), { query: { from: 'master', to: 'feature', straight: true } });
    expect(res.body.commits.map((c: { id: string }) => c.id)).toEqual([f1.id, f2.id]);
    expect(res.body.diffs.map((d: { new_path: string; diff: string }) => [d.new_path, d.diff])).toEqual([
      ['a.txt', '@@ -1 +1 @@\n-a\n+a feature\n'],
      ['b.txt', '@@ -1 +1 @@\n-b master\n+b\n'],
      ['c.txt', '@@ -0,0 +1 @@\n+c\n'],
    ]);
  });

  it('takes SHAs (and their prefixes), and answers an older `to` with no commits', async () => {
    const res = await api.get(repo(project.id, '/compare'), { query: { from: base.id.slice(0, 8), to: m1.id } });
    expect(res.body).toMatchObject({ commit: { id: m1.id }, commits: [{ id: m1.id }], compare_same_ref: false });
    expect(res.body.diffs.map((d: { new_path: string }) => d.new_path)).toEqual(['b.txt']);
    const backwards = await api.get(repo(project.id, '/compare'), { query: { from: m1.id, to: base.id } });
    expect(backwards.body).toEqual({ commit: null, commits: [], diffs: [], compare_timeout: false, compare_same_ref: false });
  });

  it('answers the same ref with compare_same_ref true and an unknown ref with an empty compare (GitLab 12: 200, same null)', async () => {
    const same = await api.get(repo(project.id, '/compare'), { query: { from: 'master', to: m1.id } });
    expect(same.body).toEqual({ commit: null, commits: [], diffs: [], compare_timeout: false, compare_same_ref: true });
    const unknown = await api.get(repo(project.id, '/compare'), { query: { from: 'master', to: 'nope' } });
    expect([unknown.status, unknown.body]).toEqual([200, { commit: null, commits: [], diffs: [], compare_timeout: false, compare_same_ref: null }]);
  });

  it("applies GitLab 12's collection limits: a commit's diff stops at 100 files; compare lists all and sets compare_timeout", async () => {
    const big = await createProject(api);
    await commitTo(big.id, 'master', [action('create', 'start.txt', 's\n')]);
    const many = Array.from({ length: 101 }, (_, i) => action('create', `f${String(i).padStart(3, '0')}.txt`, `${i}\n`));
    const made = await commitTo(big.id, 'wide', many, { start_branch: 'master' });
    const diff = await api.get(repo(big.id, `/commits/${made.id}/diff`), { query: { per_page: 100, page: 1 } });
    expect([diff.status, diff.headers.get('x-total'), diff.body.length, diff.body.at(-1).new_path]).toEqual([200, '100', 100, 'f099.txt']);
    const compared = await api.get(repo(big.id, '/compare'), { query: { from: 'master', to: 'wide' } });
    expect([compared.body.diffs.length, compared.body.compare_timeout]).toEqual([101, true]);
  });

  it('requires from and to', async () => {
    const res = await api.get(repo(project.id, '/compare'));
    expect([res.status, res.body]).toEqual([400, { error: 'from is missing, to is missing' }]);
    const bad = await api.get(repo(project.id, '/compare'), { query: { from: 'master', to: 'feature', straight: 'maybe' } });
    expect([bad.status, bad.body]).toEqual([400, { error: 'straight is invalid' }]);
  });
});

// Both ask download_code: reporters, or anyone who sees a public project; a private project of others is 404.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/repository/commits/master/diff': { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, developer: 200, admin: 200 }, internal: { anonymous: 404, nonMember: 200, external: 404, guest: 200 }, public: { anonymous: 200, nonMember: 200, external: 200 } },
  'GET /projects/:id/repository/compare':             { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, maintainer: 200, admin: 200 }, internal: { anonymous: 404, nonMember: 200 }, public: { anonymous: 200, nonMember: 200 } },
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  beforeAll(async () => {
    callers = await createCallers(api, { prefix: 'diffs' });
    for (const visibility of ['private', 'internal', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      await commitTo(id, 'master', [action('create', 'README.md', '# Hi\n')]);
      projects.set(visibility, id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const path = endpoint.split(' ')[1]!.replace(':id', String(projects.get(visibility)));
    const query = path.endsWith('/compare') ? { from: 'master', to: 'master' } : undefined;
    return (await api.get(path, { token: callers[caller].token, ...(query ? { query } : {}) })).status;
  });
});
