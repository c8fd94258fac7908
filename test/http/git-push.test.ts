import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLUSH, pktLine } from '../../src/domain/repository/pkt-line.js';
import { createProject, eventually, settled } from '../support/fixtures.js';
import { basicAuth, gitScratch, packetsOf, packetTexts, withToken } from '../support/git.js';
import { createCallers, grantRoles, withScopes, type Callers } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * `git push` over smart HTTP (git-receive-pack) with the real git (2.39): GitLab 12's push
 * rules, the events a push appends and what follows from them, the protocol's answers byte for
 * byte, and the refusals (unpack errors, the body limit, authorization).
 */

const { env: gitEnv, git, result: gitResult, newDir, remove } = gitScratch('forgelog-push-');

let api: TestServer;
let callers: Callers;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  callers = await createCallers(api);
});
afterAll(async () => {
  await api.close();
  remove();
});

const repo = (projectId: number, rest = '') => `/projects/${projectId}/repository${rest}`;

/** A working copy with `origin` at the project, as the token's user. */
async function workingCopy(project: { http_url_to_repo: string }, token: string): Promise<string> {
  const dir = newDir();
  await git(['init', '-q', '-b', 'master', dir]);
  await git(['remote', 'add', 'origin', withToken(project.http_url_to_repo, token)], dir);
  return dir;
}
async function commitFile(dir: string, path: string, content: string, message: string): Promise<string> {
  writeFileSync(join(dir, path), content);
  await git(['add', path], dir);
  await git(['commit', '-q', '-m', message], dir);
  return (await git(['rev-parse', 'HEAD'], dir)).trim();
}
const head = async (projectId: number, branch: string) => {
  const res = await api.get(repo(projectId, `/branches/${encodeURIComponent(branch)}`));
  return res.status === 200 ? (res.body.commit.id as string) : null;
};
const branchNames = async (projectId: number) => ((await api.get(repo(projectId, '/branches'))).body as { name: string }[]).map((b) => b.name);

const receivePack = (url: string, body: Buffer, token: string) =>
  fetch(`${url}/git-receive-pack`, { method: 'POST', body: new Uint8Array(body), headers: { 'content-type': 'application/x-git-receive-pack-request', ...basicAuth(token) } });

async function newProject(options: { visibility?: 'private' | 'public' } = {}) {
  const made = await createProject(api, { token: callers.owner.token!, visibility: options.visibility ?? 'private' });
  await grantRoles(api, callers, { projects: made.id });
  return (await api.get(`/projects/${made.id}`)).body as { id: number; http_url_to_repo: string; path_with_namespace: string; default_branch: string | null };
}

describe('GET /:repo.git/info/refs?service=git-receive-pack', () => {
  it('advertises the refs with receive-pack capabilities, and capabilities^{} when empty', async () => {
    const project = await newProject();
    const url = `${project.http_url_to_repo}/info/refs?service=git-receive-pack`;
    const empty = await fetch(url, { headers: basicAuth(callers.developer.token!) });
    expect([empty.status, empty.headers.get('content-type')]).toEqual([200, 'application/x-git-receive-pack-advertisement']);
    const caps = 'report-status delete-refs side-band-64k quiet atomic ofs-delta push-options object-format=sha1 agent=forgelog/12.10.14-forgelog';
    expect(packetTexts(packetsOf(Buffer.from(await empty.arrayBuffer())))).toEqual(['# service=git-receive-pack\n', 'flush', `${'0'.repeat(40)} capabilities^{}\0${caps}\n`, 'flush']);
    const dir = await workingCopy(project, callers.developer.token!);
    const a = await commitFile(dir, 'a.txt', 'a\n', 'A');
    await git(['tag', '-a', '-m', 'One', 'v1'], dir);
    await git(['push', '-q', 'origin', 'master', 'master:topic', 'v1'], dir);
    const v1 = (await git(['rev-parse', 'v1'], dir)).trim();
    const full = await fetch(url, { headers: basicAuth(callers.developer.token!) });
    expect(packetTexts(packetsOf(Buffer.from(await full.arrayBuffer())))).toEqual([
      '# service=git-receive-pack\n',
      'flush',
      `${a} refs/heads/master\0${caps}\n`,
      `${a} refs/heads/topic\n`,
      `${v1} refs/tags/v1\n`,
      'flush',
    ]);
  });

  it('asks anonymous callers to sign in, refuses who may not push (403) and who may not see the project (404)', async () => {
    const project = await newProject();
    const url = `${project.http_url_to_repo}/info/refs?service=git-receive-pack`;
    const anonymous = await fetch(url);
    expect([anonymous.status, anonymous.headers.get('www-authenticate'), await anonymous.text()]).toEqual([401, 'Basic realm="GitLab"', 'HTTP Basic: Access denied\n']);
    const reporter = await fetch(url, { headers: basicAuth(callers.reporter.token!) });
    expect([reporter.status, await reporter.text()]).toEqual([403, 'You are not allowed to push code to this project.']);
    const outsider = await fetch(url, { headers: basicAuth(callers.nonMember.token!) });
    expect([outsider.status, await outsider.text()]).toEqual([404, 'The project you were looking for could not be found.']);
    const readOnly = await withScopes(api, callers.developer, ['read_repository']);
    const scoped = await fetch(url, { headers: basicAuth(readOnly.token!) });
    expect([scoped.status, await scoped.text()]).toEqual([403, 'You are not allowed to upload code.']);
    const writeScope = await withScopes(api, callers.developer, ['write_repository']);
    expect((await fetch(url, { headers: basicAuth(writeScope.token!) })).status).toBe(200);
    // A public project is no different: a push needs a signed-in member.
    const open = await newProject({ visibility: 'public' });
    expect((await fetch(`${open.http_url_to_repo}/info/refs?service=git-receive-pack`)).status).toBe(401);
    expect((await fetch(`${open.http_url_to_repo}/info/refs?service=git-receive-pack`, { headers: basicAuth(callers.nonMember.token!) })).status).toBe(403);
  });

  it('is refused by git the same way', async () => {
    const project = await newProject();
    const dir = await workingCopy(project, callers.reporter.token!);
    await commitFile(dir, 'a.txt', 'a\n', 'A');
    const res = await gitResult(['push', 'origin', 'master'], dir);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('You are not allowed to push code to this project.');
    expect(await branchNames(project.id)).toEqual([]);
  });
});

describe('git push', () => {
  it('pushes to an empty project: the default branch, its protection, the events, the activity', async () => {
    const project = await newProject();
    const dir = await workingCopy(project, callers.developer.token!);
    const first = await commitFile(dir, 'README.md', '# Hi\n', 'First');
    const second = await commitFile(dir, 'b.txt', 'b\n', 'Second\n\nwith a body');
    const res = await gitResult(['push', 'origin', 'master'], dir);
    expect(res, res.stderr).toMatchObject({ code: 0 });
    expect(res.stderr).toContain(' * [new branch]      master -> master');
    expect(await head(project.id, 'master')).toBe(second);
    expect((await api.get(`/projects/${project.id}`)).body.default_branch).toBe('master');
    // default_branch_protection 2 (the default): maintainers push and merge.
    const protection = await api.get(`/projects/${project.id}/protected_branches/master`);
    expect(protection.body).toMatchObject({ name: 'master', push_access_levels: [{ access_level: 40 }], merge_access_levels: [{ access_level: 40 }] });
    const events = await api.events(`repository-${project.id}:refs/heads/master`);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      [
        'BranchCreated',
        {
          project_id: project.id,
          branch: 'master',
          new_sha: second,
          commits: [second, first],
          commit_details: [
            // No user has the commits' author email: author_id null.
            { message: 'Second\n\nwith a body\n', author_name: 'Ada Pusher', author_id: null },
            { message: 'First\n', author_name: 'Ada Pusher', author_id: null },
          ],
          commit_count: 2,
        },
      ],
    ]);
    expect(events[0]!.metadata).toMatchObject({ actor_id: callers.developer.user!.id });
    const activity = await api.get(`/projects/${project.id}/events`, { token: callers.developer.token! });
    expect(activity.body[0]).toMatchObject({
      action_name: 'pushed new',
      author_id: callers.developer.user!.id,
      push_data: { commit_count: 2, action: 'created', ref_type: 'branch', commit_from: null, commit_to: second, ref: 'master', commit_title: 'Second' },
    });
    // The developer may not push to the protected default branch any more.
    await commitFile(dir, 'c.txt', 'c\n', 'Third');
    const refused = await gitResult(['push', 'origin', 'master'], dir);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('remote: GitLab: You are not allowed to push code to protected branches on this project.');
    expect(refused.stderr).toContain('! [remote rejected] master -> master (pre-receive hook declined)');
    expect(await head(project.id, 'master')).toBe(second);
  });
});

describe('git push to branches', () => {
  let project: Awaited<ReturnType<typeof newProject>>;
  let dev: string;
  let maintainer: string;
  let base: string;
  beforeAll(async () => {
    project = await newProject();
    maintainer = await workingCopy(project, callers.maintainer.token!);
    base = await commitFile(maintainer, 'README.md', '# Base\n', 'Base');
    await git(['push', '-q', 'origin', 'master'], maintainer);
    dev = await workingCopy(project, callers.developer.token!);
    await git(['fetch', '-q', 'origin'], dev);
    await git(['reset', '-q', '--hard', 'origin/master'], dev);
  });

  it('creates a branch and fast-forwards it: events with the commits each push brought', async () => {
    await git(['checkout', '-q', '-b', 'topic'], dev);
    const one = await commitFile(dev, 'one.txt', '1\n', 'One');
    await git(['push', '-q', 'origin', 'topic'], dev);
    const two = await commitFile(dev, 'two.txt', '2\n', 'Two');
    const three = await commitFile(dev, 'three.txt', '3\n', 'Three');
    await git(['push', '-q', 'origin', 'topic'], dev);
    expect(await head(project.id, 'topic')).toBe(three);
    const events = await api.events(`repository-${project.id}:refs/heads/topic`);
    expect(events.map((e) => [e.type, e.data.commits, e.data.commit_count])).toEqual([
      // A new branch brings the commits no branch had: not master's.
      ['BranchCreated', [one], 1],
      ['BranchUpdated', [three, two], 2],
    ]);
    const activity = (await api.get(`/projects/${project.id}/events`, { token: callers.developer.token! })).body;
    expect(activity[0]).toMatchObject({ action_name: 'pushed to', push_data: { action: 'pushed', ref: 'topic', commit_from: one, commit_to: three, commit_count: 2, commit_title: 'Three' } });
  });

  it('leaves a non-fast-forward to git without --force, and takes it with --force on an unprotected branch', async () => {
    await git(['checkout', '-q', '-b', 'rewrite', base], dev);
    await commitFile(dev, 'r.txt', 'r1\n', 'R1');
    await git(['push', '-q', 'origin', 'rewrite'], dev);
    await git(['reset', '-q', '--hard', base], dev);
    const other = await commitFile(dev, 'r.txt', 'r2\n', 'R2');
    const plain = await gitResult(['push', 'origin', 'rewrite'], dev);
    expect(plain.code).not.toBe(0);
    expect(plain.stderr).toContain('! [rejected]        rewrite -> rewrite (non-fast-forward)');
    const forced = await gitResult(['push', '--force', 'origin', 'rewrite'], dev);
    expect(forced, forced.stderr).toMatchObject({ code: 0 });
    expect(forced.stderr).toContain('+ ');
    expect(forced.stderr).toContain('rewrite -> rewrite (forced update)');
    expect(await head(project.id, 'rewrite')).toBe(other);
    expect((await api.events(`repository-${project.id}:refs/heads/rewrite`)).at(-1)).toMatchObject({ type: 'BranchUpdated', data: { new_sha: other, commits: [other], commit_count: 1 } });
  });

  it('refuses a force push to a protected branch, even to a maintainer', async () => {
    await git(['checkout', '-q', 'master'], maintainer);
    const pushed = await commitFile(maintainer, 'README.md', '# Moved on\n', 'Move on');
    await git(['push', '-q', 'origin', 'master'], maintainer);
    await git(['reset', '-q', '--hard', base], maintainer);
    await commitFile(maintainer, 'x.txt', 'x\n', 'Diverge');
    const res = await gitResult(['push', '--force', 'origin', 'master'], maintainer);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('remote: GitLab: You are not allowed to force push code to a protected branch on this project.');
    expect(res.stderr).toContain('! [remote rejected] master -> master (pre-receive hook declined)');
    expect(await head(project.id, 'master')).toBe(pushed);
    await git(['reset', '-q', '--hard', pushed], maintainer);
  });

  it('refuses a developer on a branch only maintainers push to (push_access_level 40)', async () => {
    expect((await api.post(`/projects/${project.id}/protected_branches`, { name: 'release/*', push_access_level: 40, merge_access_level: 40 })).status).toBe(201);
    await git(['checkout', '-q', '-b', 'release/1', base], maintainer);
    await git(['push', '-q', 'origin', 'release/1'], maintainer);
    await git(['fetch', '-q', 'origin'], dev);
    await git(['checkout', '-q', '-b', 'rel', 'origin/release/1'], dev);
    await commitFile(dev, 'rel.txt', 'rel\n', 'Release work');
    const res = await gitResult(['push', 'origin', 'rel:release/1'], dev);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('remote: GitLab: You are not allowed to push code to protected branches on this project.');
    expect(await head(project.id, 'release/1')).toBe(base);
    // …and a new protected branch too.
    const created = await gitResult(['push', 'origin', 'rel:release/2'], dev);
    expect(created.stderr).toContain('remote: GitLab: You are not allowed to create protected branches on this project.');
    expect(await head(project.id, 'release/2')).toBeNull();
  });

  it('pushes several refs atomically: one refused, none written', async () => {
    await git(['checkout', '-q', '-b', 'both', base], dev);
    const tip = await commitFile(dev, 'both.txt', 'b\n', 'Both');
    const before = await head(project.id, 'release/1');
    const res = await gitResult(['push', 'origin', 'both:refs/heads/fresh', 'both:release/1'], dev);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('! [remote rejected] both -> fresh (pre-receive hook declined)');
    expect(res.stderr).toContain('! [remote rejected] both -> release/1 (pre-receive hook declined)');
    expect(await head(project.id, 'fresh')).toBeNull();
    expect(await head(project.id, 'release/1')).toBe(before);
    expect((await api.get(repo(project.id, `/commits/${tip}`))).status).toBe(404);
    // A ref outside branches and tags: git's atomic failure for the others.
    const notes = await gitResult(['push', '--atomic', 'origin', 'both:refs/heads/fresh', 'both:refs/notes/x', 'both:refs/merge-requests/1/head'], dev);
    expect(notes.stderr).toContain('! [remote rejected] both -> refs/notes/x (only branches (refs/heads/*) and tags (refs/tags/*) can be pushed)');
    expect(notes.stderr).toContain('! [remote rejected] both -> refs/merge-requests/1/head (deny updating a hidden ref)');
    expect(notes.stderr).toContain('! [remote rejected] both -> fresh (atomic push failure)');
    expect(await head(project.id, 'fresh')).toBeNull();
  });

  it('deletes a branch, never the default one', async () => {
    await git(['push', '-q', 'origin', `${base}:refs/heads/doomed`], dev);
    expect(await head(project.id, 'doomed')).toBe(base);
    const res = await gitResult(['push', 'origin', ':doomed'], dev);
    expect(res, res.stderr).toMatchObject({ code: 0 });
    expect(res.stderr).toContain(' - [deleted]         doomed');
    expect(await head(project.id, 'doomed')).toBeNull();
    expect((await api.events(`repository-${project.id}:refs/heads/doomed`)).at(-1)).toMatchObject({ type: 'BranchDeleted', data: { old_sha: base } });
    const activity = (await api.get(`/projects/${project.id}/events`, { token: callers.developer.token! })).body;
    expect(activity[0]).toMatchObject({ action_name: 'deleted', push_data: { action: 'removed', ref: 'doomed', commit_from: base, commit_to: null } });
    const master = await gitResult(['push', 'origin', ':master'], maintainer);
    expect(master.stderr).toContain('remote: GitLab: The default branch of a project cannot be deleted.');
    expect(await head(project.id, 'master')).not.toBeNull();
  });

  it('gives a merge request a new version when its source branch is pushed', async () => {
    await git(['checkout', '-q', '-b', 'feature', base], dev);
    await commitFile(dev, 'f.txt', 'f1\n', 'Feature 1');
    await git(['push', '-q', 'origin', 'feature'], dev);
    const mr = (await api.post(`/projects/${project.id}/merge_requests`, { title: 'Feature', source_branch: 'feature', target_branch: 'master' }, { token: callers.developer.token! })).body;
    const versions = async () => (await api.get(`/projects/${project.id}/merge_requests/${mr.iid}/versions`)).body as { head_commit_sha: string }[];
    await eventually(async () => ((await versions()).length === 1 ? true : undefined));
    const tip = await commitFile(dev, 'f.txt', 'f2\n', 'Feature 2');
    await git(['push', '-q', 'origin', 'feature'], dev);
    const after = await eventually(async () => {
      const list = await versions();
      return list.length === 2 ? list : undefined;
    });
    expect(after[0]!.head_commit_sha).toBe(tip);
    // Deleting the source branch closes it.
    await git(['push', '-q', 'origin', ':feature'], dev);
    await eventually(async () => ((await api.get(`/projects/${project.id}/merge_requests/${mr.iid}`)).body.state === 'closed' ? true : undefined));
  });
});

describe('git push of tags', () => {
  it('pushes lightweight and annotated tags, and refuses a protected one', async () => {
    const project = await newProject();
    const dir = await workingCopy(project, callers.maintainer.token!);
    const a = await commitFile(dir, 'a.txt', 'a\n', 'A');
    await git(['push', '-q', 'origin', 'master'], dir);
    await git(['tag', 'light'], dir);
    await git(['tag', '-a', '-m', 'Release one\n\nNotes', 'v1.0'], dir);
    const annotated = (await git(['rev-parse', 'v1.0'], dir)).trim();
    const res = await gitResult(['push', 'origin', '--tags'], dir);
    expect(res, res.stderr).toMatchObject({ code: 0 });
    const tags = (await api.get(repo(project.id, '/tags'), { query: { order_by: 'name', sort: 'asc' } })).body;
    expect(tags.map((t: any) => [t.name, t.target, t.commit.id, t.message])).toEqual([
      ['light', a, a, null],
      ['v1.0', annotated, a, 'Release one\n\nNotes\n'],
    ]);
    const activity = (await api.get(`/projects/${project.id}/events`)).body;
    expect(activity.filter((e: any) => e.push_data?.ref_type === 'tag').map((e: any) => [e.action_name, e.push_data.ref]).sort()).toEqual([
      ['pushed new', 'light'],
      ['pushed new', 'v1.0'],
    ]);

    expect((await api.post(`/projects/${project.id}/protected_tags`, { name: 'v*' })).status).toBe(201);
    const dev = await workingCopy(project, callers.developer.token!);
    await git(['fetch', '-q', 'origin'], dev);
    await git(['tag', 'v2.0', 'origin/master'], dev);
    const devTag = await gitResult(['push', 'origin', 'v2.0'], dev);
    expect(devTag.stderr).toContain('remote: GitLab: You are not allowed to create this tag as it is protected.');
    // A maintainer creates it, but moves and deletes no protected tag.
    const b = await commitFile(dir, 'b.txt', 'b\n', 'B');
    await git(['push', '-q', 'origin', 'master'], dir);
    await git(['tag', '-f', 'v1.0', b], dir);
    const moved = await gitResult(['push', '--force', 'origin', 'v1.0'], dir);
    expect(moved.stderr).toContain('remote: GitLab: Protected tags cannot be updated.');
    const deleted = await gitResult(['push', 'origin', ':refs/tags/v1.0'], dir);
    expect(deleted.stderr).toContain('remote: GitLab: Protected tags cannot be deleted.');
    expect((await api.get(repo(project.id, '/tags/v1.0'))).body.target).toBe(annotated);
    // An unprotected tag moves: deleted and created again.
    await git(['tag', '-f', 'light', b], dir);
    const light = await gitResult(['push', '--force', 'origin', 'light'], dir);
    expect(light, light.stderr).toMatchObject({ code: 0 });
    expect((await api.get(repo(project.id, '/tags/light'))).body.target).toBe(b);
    expect((await api.events(`repository-${project.id}:refs/tags/light`)).map((e) => e.type)).toEqual(['TagCreated', 'TagDeleted', 'TagCreated']);
  });
});

describe('default_branch_protection', () => {
  it('protects the default branch at its first write through the commits API too, and not with 0', async () => {
    const project = await newProject();
    const made = await api.post(repo(project.id, '/commits'), { branch: 'main', commit_message: 'First', actions: [{ action: 'create', file_path: 'a', content: 'a' }] }, { token: callers.developer.token! });
    expect(made.status).toBe(201);
    expect((await api.get(`/projects/${project.id}`)).body.default_branch).toBe('main');
    expect((await api.get(`/projects/${project.id}/protected_branches`)).body.map((b: any) => [b.name, b.push_access_levels[0].access_level])).toEqual([['main', 40]]);
    // Another branch's first write protects nothing.
    await api.post(repo(project.id, '/branches'), { branch: 'other', ref: 'main' }, { token: callers.developer.token! });
    expect((await api.get(`/projects/${project.id}/protected_branches`)).body).toHaveLength(1);

    expect((await api.put('/application/settings', { default_branch_protection: 1 })).status).toBe(200);
    try {
      const devs = await newProject();
      const dir = await workingCopy(devs, callers.developer.token!);
      await commitFile(dir, 'a', 'a', 'A');
      await git(['push', '-q', 'origin', 'master'], dir);
      expect((await api.get(`/projects/${devs.id}/protected_branches/master`)).body).toMatchObject({ push_access_levels: [{ access_level: 30 }], merge_access_levels: [{ access_level: 40 }] });
      expect((await api.put('/application/settings', { default_branch_protection: 0 })).status).toBe(200);
      const open = await newProject();
      const other = await workingCopy(open, callers.developer.token!);
      await commitFile(other, 'a', 'a', 'A');
      await git(['push', '-q', 'origin', 'master'], other);
      expect((await api.get(`/projects/${open.id}/protected_branches`)).body).toEqual([]);
    } finally {
      await api.put('/application/settings', { default_branch_protection: 2 });
    }
  });
});

/** The objects the project's repository stores, as its snapshot (GET /projects/:id/snapshot) lists them. */
async function storedObjects(projectId: number): Promise<number> {
  const res = await fetch(`${api.apiUrl}/projects/${projectId}/snapshot`, { headers: { 'PRIVATE-TOKEN': api.rootToken } });
  const listed = spawnSync('tar', ['-t'], { input: Buffer.from(await res.arrayBuffer()) }).stdout.toString();
  return listed.split('\n').filter((name) => /objects\/[0-9a-f]{2}\/[0-9a-f]{38}$/.test(name)).length;
}

/** A request body as git sends it: the commands (the first with the capabilities), a flush, the pack. */
function pushBody(commands: string[], capabilities: string, pack: Buffer): Buffer {
  return Buffer.concat([...commands.map((c, i) => pktLine(i === 0 ? `${c}\0${capabilities}\n` : `${c}\n`)), FLUSH, pack]);
}
async function packFor(dir: string, revs: string): Promise<Buffer> {
  const child = execFile('/usr/bin/git', ['pack-objects', '--revs', '--stdout', '-q'], { cwd: dir, env: gitEnv, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
  const out: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
  child.stdin!.end(revs);
  await new Promise((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve(null) : reject(new Error(`pack-objects: ${code}`)))));
  return Buffer.concat(out);
}

describe('POST /:repo.git/git-receive-pack', () => {
  let project: Awaited<ReturnType<typeof newProject>>;
  let dir: string;
  let base: string;
  beforeAll(async () => {
    project = await newProject();
    dir = await workingCopy(project, callers.maintainer.token!);
    base = await commitFile(dir, 'a.txt', 'a\n', 'A');
    await git(['push', '-q', 'origin', 'master'], dir);
  });

  it('answers report-status in plain pkt-lines without side-band, inside band 1 with it', async () => {
    const next = await commitFile(dir, 'b.txt', 'b\n', 'B');
    const pack = await packFor(dir, `${next}\n^${base}\n`);
    const plain = await receivePack(project.http_url_to_repo, pushBody([`${base} ${next} refs/heads/master`], 'report-status agent=test', pack), callers.maintainer.token!);
    expect([plain.status, plain.headers.get('content-type')]).toEqual([200, 'application/x-git-receive-pack-result']);
    expect(packetTexts(packetsOf(Buffer.from(await plain.arrayBuffer())))).toEqual(['unpack ok\n', 'ok refs/heads/master\n', 'flush']);
    expect(await head(project.id, 'master')).toBe(next);
    // A stale old value (another push moved the branch): git's words, every ref refused.
    const banded = await receivePack(project.http_url_to_repo, pushBody([`${base} ${next} refs/heads/master`, `${'0'.repeat(40)} ${next} refs/heads/side`], 'report-status side-band-64k', pack), callers.maintainer.token!);
    const packets = packetsOf(Buffer.from(await banded.arrayBuffer()));
    expect(packets.at(-1)!.type).toBe('flush');
    const bands = packets.flatMap((p) => (p.type === 'data' ? [[p.data[0], p.data.subarray(1)] as const] : []));
    expect(bands.filter(([band]) => band === 2).map(([, data]) => data.toString())).toEqual([`error: cannot lock ref 'refs/heads/master': is at ${next} but expected ${base}\n`]);
    const report = Buffer.concat(bands.filter(([band]) => band === 1).map(([, data]) => data));
    expect(packetTexts(packetsOf(report))).toEqual(['unpack ok\n', 'ng refs/heads/master failed to update ref\n', 'ng refs/heads/side atomic push failure\n', 'flush']);
    expect(await head(project.id, 'side')).toBeNull();
  });

  it('refuses a corrupt pack with unpack <error>, storing nothing', async () => {
    const tip = await commitFile(dir, 'c.txt', 'c'.repeat(5000), 'C');
    const from = (await head(project.id, 'master'))!;
    const pack = await packFor(dir, `${tip}\n^${from}\n`);
    const stored = await storedObjects(project.id);
    const corrupt = Buffer.from(pack);
    corrupt[40] = corrupt[40]! ^ 0xff;
    const res = await receivePack(project.http_url_to_repo, pushBody([`${from} ${tip} refs/heads/master`], 'report-status', corrupt), callers.maintainer.token!);
    const lines = packetTexts(packetsOf(Buffer.from(await res.arrayBuffer())));
    expect(lines[0]).toMatch(/^unpack (pack has bad object at offset \d+: .+|pack checksum mismatch)\n$/);
    expect(lines.slice(1)).toEqual(['ng refs/heads/master unpacker error\n', 'flush']);
    // A pack cut short, and objects that do not connect (a commit without its parent and tree).
    const cut = await receivePack(project.http_url_to_repo, pushBody([`${from} ${tip} refs/heads/master`], 'report-status', pack.subarray(0, pack.length - 30)), callers.maintainer.token!);
    expect(packetTexts(packetsOf(Buffer.from(await cut.arrayBuffer())))[0]).toMatch(/^unpack /);
    // No pack at all where one is due.
    const none = await receivePack(project.http_url_to_repo, pushBody([`${from} ${tip} refs/heads/master`], 'report-status', Buffer.alloc(0)), callers.maintainer.token!);
    expect(packetTexts(packetsOf(Buffer.from(await none.arrayBuffer())))).toEqual(['unpack premature end of pack file\n', 'ng refs/heads/master unpacker error\n', 'flush']);
    expect(await storedObjects(project.id)).toBe(stored);
    expect(await head(project.id, 'master')).toBe(from);
  });

  it('refuses objects that do not connect', async () => {
    const from = (await head(project.id, 'master'))!;
    // A commit whose parent the repository does not have.
    const orphanDir = newDir();
    await git(['init', '-q', '-b', 'master', orphanDir]);
    const root = await commitFile(orphanDir, 'o.txt', 'o\n', 'Root');
    const child = await commitFile(orphanDir, 'o.txt', 'p\n', 'Child');
    const pack = await packFor(orphanDir, `${child}\n^${root}\n`);
    const stored = await storedObjects(project.id);
    const res = await receivePack(project.http_url_to_repo, pushBody([`${'0'.repeat(40)} ${child} refs/heads/orphan`], 'report-status', pack), callers.maintainer.token!);
    expect(packetTexts(packetsOf(Buffer.from(await res.arrayBuffer())))).toEqual(['unpack ok\n', 'ng refs/heads/orphan missing necessary objects\n', 'flush']);
    expect(await storedObjects(project.id)).toBe(stored);
    expect(await head(project.id, 'master')).toBe(from);
  });

  it('answers requests receive-pack cannot read with a plain-text 4xx', async () => {
    const url = `${project.http_url_to_repo}/git-receive-pack`;
    const token = basicAuth(callers.maintainer.token!);
    const other = await fetch(url, { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain', ...token } });
    expect([other.status, await other.text()]).toEqual([415, 'Unsupported Media Type\n']);
    const noise = await receivePack(project.http_url_to_repo, Buffer.from('zzzz'), callers.maintainer.token!);
    expect([noise.status, await noise.text()]).toEqual([400, 'Bad Request: protocol error: bad line length character: zzzz\n']);
    const wrong = await receivePack(project.http_url_to_repo, Buffer.concat([pktLine('want x\n'), FLUSH]), callers.maintainer.token!);
    expect([wrong.status, await wrong.text()]).toEqual([400, "fatal: protocol error: expected old/new/ref, got 'want x'\n"]);
    const unfinished = await receivePack(project.http_url_to_repo, pktLine(`${base} ${base} refs/heads/master\n`), callers.maintainer.token!);
    expect([unfinished.status, await unfinished.text()]).toEqual([400, 'Bad Request: the command list has no flush\n']);
    const swarm = await receivePack(project.http_url_to_repo, Buffer.concat([Buffer.from('0004'.repeat(250_001)), FLUSH]), callers.maintainer.token!);
    expect([swarm.status, await swarm.text()]).toEqual([413, 'Request Entity Too Large: more than 250000 pkt-lines\n']);
    // Anonymous and reporters, before the body is read.
    expect((await fetch(url, { method: 'POST', body: 'x', headers: { 'content-type': 'application/x-git-receive-pack-request' } })).status).toBe(401);
    expect((await receivePack(project.http_url_to_repo, Buffer.from('zzzz'), callers.reporter.token!)).status).toBe(403);
  });

  /**
   * A clone with one more commit of `file` (`content`) pushed under a 64 KiB FORGELOG_MAX_PUSH_BYTES:
   * refused as git refuses an oversize pack, master unchanged; then `after` with the clone.
   */
  async function refusedOversize(file: string, content: Buffer, after: (clone: string) => Promise<void> = async () => {}) {
    const config = api.runtime.config as { maxPushBytes: number };
    const limit = config.maxPushBytes;
    config.maxPushBytes = 64 * 1024;
    try {
      const big = newDir();
      await git(['clone', '-q', withToken(project.http_url_to_repo, callers.maintainer.token!), big]);
      writeFileSync(join(big, file), content);
      await git(['add', file], big);
      await git(['commit', '-q', '-m', file], big);
      const before = await head(project.id, 'master');
      const res = await gitResult(['push', 'origin', 'master'], big);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain('remote: fatal: pack exceeds maximum allowed size (65536 bytes)');
      expect(res.stderr).toContain('error: remote unpack failed: pack exceeds maximum allowed size');
      expect(res.stderr).toContain('! [remote rejected] master -> master (unpacker error)');
      expect(await head(project.id, 'master')).toBe(before);
      await after(big);
    } finally {
      config.maxPushBytes = limit;
    }
  }

  it('refuses a body past FORGELOG_MAX_PUSH_BYTES, reading no further', async () => {
    await refusedOversize('noise.bin', randomBytes(3_000_000));
  });

  it('refuses a pack under FORGELOG_MAX_PUSH_BYTES whose objects inflate past it, as git refuses an oversize pack', async () => {
    // 3 MB of zeros: a pack of a few KiB.
    await refusedOversize('zeros.bin', Buffer.alloc(3_000_000), async (big) => {
      (api.runtime.config as { maxPushBytes: number }).maxPushBytes = 4 * 1024 * 1024;
      expect(await gitResult(['push', 'origin', 'master'], big)).toMatchObject({ code: 0 });
    });
  });
});

/** A fast-import stream: `commits` commits on master editing a few of 60 files each (so a repacked pack is mostly deltas), a side branch merged back, an annotated tag. */
function history(commits: number): string {
  const files = Array.from({ length: 60 }, (_, f) => Array.from({ length: 80 }, (_, l) => `file ${f} line ${l}: ${'lorem ipsum dolor sit amet '.repeat(2)}`));
  const path = (f: number) => `dir${f % 6}/sub${f % 3}/file${f}.txt`;
  const out: string[] = [];
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  let time = 1_600_000_000;
  const commit = (ref: string, mark: number, from: number | null, merge: number | null, message: string, touched: number[]) => {
    out.push(`commit ${ref}\nmark :${mark}\nauthor Ada <ada@example.com> ${time} +0000\ncommitter Ada <ada@example.com> ${time} +0000\n${data(message)}`);
    time += 60;
    if (from !== null) out.push(`from :${from}\n`);
    if (merge !== null) out.push(`merge :${merge}\n`);
    for (const f of touched) out.push(`M 100644 inline ${path(f)}\n${data(files[f]!.join('\n'))}`);
  };
  commit('refs/heads/master', 1, null, null, 'Initial', files.map((_, f) => f));
  let mark = 1;
  let side = 0;
  for (let i = 1; i < commits; i++) {
    const touched = [(i * 7) % 60, (i * 13) % 60, (i * 29) % 60];
    for (const f of touched) files[f]![(i * 3) % 80] = `file ${f} changed in commit ${i}`;
    if (i === Math.floor(commits / 2)) side = mark;
    commit('refs/heads/master', mark + 1, mark, null, `Commit ${i}\n\nTouches ${touched.join(', ')}`, touched);
    mark++;
  }
  const master = mark;
  files[59]![0] = 'the side branch';
  commit('refs/heads/side', mark + 1, side, null, 'Side work', [59]);
  mark++;
  commit('refs/heads/master', mark + 1, master, mark, "Merge branch 'side'", []);
  mark++;
  out.push(`tag v1.0\nfrom :${master}\ntagger Ada <ada@example.com> ${time} +0000\n${data('Release 1.0')}`);
  return out.join('');
}

describe('git push of a real repository', () => {
  it('pushes a repacked history with deltas, which clones back identical and fsck --strict', async () => {
    const project = await newProject();
    const dir = newDir();
    await git(['init', '-q', '-b', 'master', dir]);
    const imported = spawnSync('/usr/bin/git', ['fast-import', '--quiet'], { cwd: dir, env: gitEnv, input: history(1000) });
    expect(imported.status, imported.stderr.toString()).toBe(0);
    await git(['repack', '-adfq', '--depth=50', '--window=50'], dir);
    await git(['checkout', '-q', 'master'], dir);
    const counts = Object.fromEntries((await git(['count-objects', '-v'], dir)).trim().split('\n').map((l) => l.split(': ') as [string, string]));
    const packDir = join(dir, '.git/objects/pack');
    const packBytes = readdirSync(packDir).filter((f) => f.endsWith('.pack')).reduce((sum, f) => sum + statSync(join(packDir, f)).size, 0);
    const verified = await git(['verify-pack', '-v', ...readdirSync(packDir).filter((f) => f.endsWith('.idx')).map((f) => join(packDir, f))], dir);
    const deltas = verified.split('\n').filter((l) => /^[0-9a-f]{40} (blob|tree)\s+\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(l)).length;
    expect(deltas).toBeGreaterThan(1000);
    await git(['remote', 'add', 'origin', withToken(project.http_url_to_repo, callers.maintainer.token!)], dir);

    const started = performance.now();
    const res = await gitResult(['push', 'origin', '--all', '--follow-tags'], dir);
    const seconds = (performance.now() - started) / 1000;
    expect(res, res.stderr).toMatchObject({ code: 0 });
    const objects = Number(counts['in-pack']);
    const inflated = (await git(['cat-file', '--batch-all-objects', '--batch-check=%(objectsize)'], dir)).trim().split('\n').reduce((sum, n) => sum + Number(n), 0);
    // Measured, not asserted (docs/repository.md, "Pushing with git", quotes it).
    console.log(
      `push of ${objects} objects (${deltas} deltas), a ${(packBytes / 2 ** 20).toFixed(2)} MiB pack of ${(inflated / 2 ** 20).toFixed(1)} MiB: ${seconds.toFixed(2)} s, ` +
        `${Math.round(objects / seconds)} objects/s, ${(packBytes / 2 ** 20 / seconds).toFixed(2)} MiB/s of pack, ${(inflated / 2 ** 20 / seconds).toFixed(1)} MiB/s inflated`,
    );
    expect(await storedObjects(project.id)).toBe(objects);

    const clone = newDir();
    await git(['clone', '-q', withToken(project.http_url_to_repo, callers.maintainer.token!), clone]);
    await git(['fsck', '--strict', '--no-dangling'], clone);
    for (const format of ['%H', '%T']) {
      const mine = (await git(['log', '--all', `--format=${format}`], dir)).trim().split('\n').sort();
      const theirs = (await git(['log', '--all', `--format=${format}`], clone)).trim().split('\n').sort();
      expect(theirs).toEqual(mine);
    }
    expect((await git(['rev-parse', 'v1.0'], clone)).trim()).toBe((await git(['rev-parse', 'v1.0'], dir)).trim());
    // The event lists the newest 20 commits and counts them all.
    const [created] = await api.events(`repository-${project.id}:refs/heads/master`);
    expect([created!.data.commits.length, created!.data.commit_details.length, created!.data.commit_count]).toEqual([20, 20, 1002]);
    expect(created!.data.commits[0]).toBe((await git(['rev-parse', 'master'], dir)).trim());
    const activity = (await api.get(`/projects/${project.id}/events`)).body.find((e: any) => e.push_data?.ref === 'master');
    expect(activity.push_data).toMatchObject({ action: 'created', commit_count: 1002, commit_title: "Merge branch 'side'" });
  }, 300_000);
});
