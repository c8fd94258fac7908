import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertLines, parsePushOptions, pushOptionsWarning } from '../../src/domain/repository/push-options.js';
import { createProject, settled } from '../support/fixtures.js';
import { basicAuth, gitScratch, packetsOf, packetTexts, withToken } from '../support/git.js';
import { createCallers, grantRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * `git push -o …` over smart HTTP with the real git (2.39): the `push-options` capability,
 * GitLab 12.10's merge request push options (MergeRequests::PushOptionsHandlerService) run as
 * the pusher through the merge requests' own commands, and their errors shown on `remote:`
 * lines without failing the push.
 */

const { git, result: gitResult, newDir, remove } = gitScratch('forgelog-push-options-');

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

type Project = { id: number; http_url_to_repo: string; path_with_namespace: string };

/** A project whose default branch `main` the owner has pushed, with every role granted. */
async function newProject(settings: Record<string, unknown> = {}): Promise<{ project: Project; dir: (token: string) => Promise<string> }> {
  const made = await createProject(api, { token: callers.owner.token! });
  await grantRoles(api, callers, { projects: made.id });
  if (Object.keys(settings).length > 0) expect((await api.put(`/projects/${made.id}`, settings, { token: callers.owner.token! })).status).toBe(200);
  const project = (await api.get(`/projects/${made.id}`)).body as Project;
  const seed = newDir();
  await git(['init', '-q', '-b', 'main', seed]);
  await commitFile(seed, 'README.md', '# Shop\n', 'Start');
  await git(['push', '-q', withToken(project.http_url_to_repo, callers.owner.token!), 'main'], seed);
  const dir = async (token: string) => {
    const clone = newDir();
    await git(['clone', '-q', withToken(project.http_url_to_repo, token), clone]);
    return clone;
  };
  return { project, dir };
}
async function commitFile(dir: string, path: string, content: string, message: string): Promise<string> {
  writeFileSync(join(dir, path), content);
  await git(['add', path], dir);
  await git(['commit', '-q', '-m', message], dir);
  return (await git(['rev-parse', 'HEAD'], dir)).trim();
}
const mergeRequests = async (projectId: number) => (await api.get(`/projects/${projectId}/merge_requests`, { query: { state: 'all' } })).body as any[];
/** The `remote:` lines git shows of the push's messages. */
const remoteLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('remote:')).map((l) => l.slice('remote:'.length).replace(/\s+$/, ''));
/** The alert's text, its wrapped lines joined again. */
const alertText = (stderr: string) => remoteLines(stderr).map((l) => l.trim()).filter((l) => l !== '' && !/^=+$/.test(l)).join(' ');

describe('GET /:repo.git/info/refs?service=git-receive-pack', () => {
  it('advertises push-options', async () => {
    const { project } = await newProject();
    const res = await fetch(`${project.http_url_to_repo}/info/refs?service=git-receive-pack`, { headers: basicAuth(callers.developer.token!) });
    const first = packetTexts(packetsOf(Buffer.from(await res.arrayBuffer())))[2]!;
    expect(first.split('\0')[1]).toMatch(/^report-status delete-refs side-band-64k quiet atomic ofs-delta push-options object-format=sha1 agent=/);
  });
});

describe('git push -o merge_request.*', () => {
  it('creates the merge request as the pusher: target, assignee, the single commit as title and description', async () => {
    const { project, dir } = await newProject();
    const work = await dir(callers.developer.token!);
    await git(['checkout', '-q', '-b', 'feature'], work);
    const sha = await commitFile(work, 'a.txt', 'a\n', 'Add a\n\nBecause we need a.');
    const pushed = await gitResult(['push', '-o', 'merge_request.create', '-o', 'merge_request.target=main', 'origin', 'feature'], work);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(remoteLines(pushed.stderr).join('\n')).not.toMatch(/WARNINGS/);
    const [mr, ...others] = await mergeRequests(project.id);
    expect(others).toEqual([]);
    expect(mr).toMatchObject({
      title: 'Add a',
      description: 'Because we need a.',
      source_branch: 'feature',
      target_branch: 'main',
      state: 'opened',
      author: { id: callers.developer.user!.id },
      assignees: [{ id: callers.developer.user!.id }],
      sha,
      force_remove_source_branch: false,
      merge_when_pipeline_succeeds: false,
      labels: [],
    });
    // Through the merge requests' own command, as the pusher.
    const events = await api.events(`merge-request-${mr.id}`);
    expect([events[0]!.type, events[0]!.metadata.actor_id]).toEqual(['MergeRequestOpened', callers.developer.user!.id]);
  });

  it('takes title, description, labels, remove_source_branch and merge_when_pipeline_succeeds; a later push updates the open merge request', async () => {
    const { project, dir } = await newProject();
    await api.post(`/projects/${project.id}/labels`, { name: 'bug', color: '#ff0000' }, { token: callers.owner.token! });
    const work = await dir(callers.developer.token!);
    await git(['checkout', '-q', '-b', 'topic/two-words'], work);
    await commitFile(work, 'a.txt', 'a\n', 'One');
    await commitFile(work, 'b.txt', 'b\n', 'Two');
    const options = ['merge_request.create', 'mr.title=Ship it', 'merge_request.description=All of it', 'merge_request.label=bug', 'merge_request.label=new one', 'merge_request.remove_source_branch', 'merge_request.merge_when_pipeline_succeeds', 'ci.skip'];
    const pushed = await gitResult(['push', ...options.flatMap((o) => ['-o', o]), 'origin', 'topic/two-words'], work);
    expect(pushed.code, pushed.stderr).toBe(0);
    const [mr] = await mergeRequests(project.id);
    // No pipelines here: merge_when_pipeline_succeeds is accepted and sets nothing.
    expect(mr).toMatchObject({ title: 'Ship it', description: 'All of it', target_branch: 'main', force_remove_source_branch: true, merge_when_pipeline_succeeds: false });
    expect([...mr.labels].sort()).toEqual(['bug', 'new one']);

    await commitFile(work, 'c.txt', 'c\n', 'Three');
    const again = await gitResult(['push', '-o', 'merge_request.unlabel=bug', '-o', 'merge_request.title=Ship it now', '-o', 'merge_request.remove_source_branch=false', 'origin', 'topic/two-words'], work);
    expect(again.code, again.stderr).toBe(0);
    const updated = await mergeRequests(project.id);
    expect(updated).toHaveLength(1);
    expect(updated[0]).toMatchObject({ iid: mr.iid, title: 'Ship it now', description: 'All of it', labels: ['new one'], force_remove_source_branch: false });
  });

  it('titles a merge request of several commits after its branch, WIP when it brings none', async () => {
    const { project, dir } = await newProject();
    const work = await dir(callers.developer.token!);
    await git(['checkout', '-q', '-b', 'fix_the-thing'], work);
    await commitFile(work, 'a.txt', 'a\n', 'One');
    await commitFile(work, 'b.txt', 'b\n', 'Two');
    await git(['branch', 'empty', 'main'], work);
    const pushed = await gitResult(['push', '-o', 'merge_request.create', 'origin', 'fix_the-thing', 'empty'], work);
    expect(pushed.code, pushed.stderr).toBe(0);
    const titles = (await mergeRequests(project.id)).map((mr) => [mr.source_branch, mr.title]).sort();
    expect(titles).toEqual([
      ['empty', 'WIP: Empty'],
      ['fix_the-thing', 'Fix the thing'],
    ]);
  });

  it("reports GitLab's errors on remote: lines and keeps the push", async () => {
    const { project, dir } = await newProject();
    const work = await dir(callers.developer.token!);
    await git(['checkout', '-q', '-b', 'nowhere'], work);
    const sha = await commitFile(work, 'a.txt', 'a\n', 'A');
    const pushed = await gitResult(['push', '-o', 'merge_request.create', '-o', 'merge_request.target=nope', 'origin', 'nowhere'], work);
    expect(pushed.code, pushed.stderr).toBe(0);
    // The alert as the post-receive hook prints it: rules of 72 '=', the text wrapped and centred.
    const expected = alertLines(pushOptionsWarning(['merge_request.create', 'merge_request.target=nope'], ['Branch nope does not exist'])).map((l) => l.replace(/\s+$/, ''));
    expect(remoteLines(pushed.stderr).map((l) => l.replace(/^ /, ''))).toEqual(expected);
    expect(alertText(pushed.stderr)).toBe("WARNINGS: Error encountered with push options 'merge_request.create' 'merge_request.target=nope': Branch nope does not exist");
    expect((await api.get(`/projects/${project.id}/repository/branches/nowhere`)).body.commit.id).toBe(sha);
    expect(await mergeRequests(project.id)).toEqual([]);

    // A new branch without merge_request.create; then an open duplicate for the same branches.
    await commitFile(work, 'b.txt', 'b\n', 'B');
    const noCreate = await gitResult(['push', '-o', 'merge_request.title=T', 'origin', 'nowhere'], work);
    expect(noCreate.code).toBe(0);
    expect(alertText(noCreate.stderr)).toBe("WARNINGS: Error encountered with push options 'merge_request.title=T': A merge_request.create push option is required to create a merge request for branch nowhere");
    // The default branch is never a source; unknown options and ci.skip alone do nothing.
    await git(['checkout', '-q', 'main'], work);
    const quiet = await gitResult(['push', '-o', 'ci.skip', '-o', 'unknown.option=1', 'origin', 'main:side'], work);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain('WARNINGS');
    expect(await mergeRequests(project.id)).toEqual([]);
  });

  it('says so when merge requests are disabled', async () => {
    const { project, dir } = await newProject({ merge_requests_access_level: 'disabled' });
    const work = await dir(callers.developer.token!);
    await git(['checkout', '-q', '-b', 'feature'], work);
    await commitFile(work, 'a.txt', 'a\n', 'A');
    const pushed = await gitResult(['push', '-o', 'merge_request.create', 'origin', 'feature'], work);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(alertText(pushed.stderr)).toBe(`WARNINGS: Error encountered with push options 'merge_request.create': Merge requests are not enabled for project ${project.path_with_namespace}`);
    expect((await api.get(`/projects/${project.id}/repository/branches/feature`)).status).toBe(200);
  });

  describe('who: the push needs push_code, the merge request is the pusher’s', () => {
    const table: [Role, boolean][] = [
      ['guest', false],
      ['reporter', false],
      ['developer', true],
      ['maintainer', true],
      ['owner', true],
      ['admin', true],
    ];
    let shared: Awaited<ReturnType<typeof newProject>>;
    beforeAll(async () => {
      shared = await newProject();
    });
    for (const [role, creates] of table) {
      it(`as ${role}`, async () => {
        const work = await shared.dir(callers.owner.token!);
        await git(['remote', 'set-url', 'origin', withToken(shared.project.http_url_to_repo, callers[role].token!)], work);
        await git(['checkout', '-q', '-b', `by-${role}`], work);
        await commitFile(work, `${role}.txt`, role, `By ${role}`);
        const pushed = await gitResult(['push', '-o', 'merge_request.create', 'origin', `by-${role}`], work);
        expect(pushed.code === 0, pushed.stderr).toBe(creates);
        const mine = (await mergeRequests(shared.project.id)).filter((mr) => mr.source_branch === `by-${role}`);
        expect(mine.map((mr) => mr.author.id)).toEqual(creates ? [callers[role].user!.id] : []);
      });
    }
  });
});

describe('Gitlab::PushOptions parsing (12.10)', () => {
  it('keeps the valid namespaces and keys, aliases mr, counts labels, and a bare option is true', () => {
    expect(parsePushOptions(['mr.create', 'merge_request.target= main ', 'merge_request.label=a', 'merge_request.label=b', 'merge_request.label=a', 'merge_request.bogus=1', 'other.create', 'nodot', 'ci.skip'])).toEqual({
      mergeRequest: { create: true, target: 'main', label: ['a', 'b'] },
      ciSkip: true,
    });
    expect(parsePushOptions(['ci.skip'])).toEqual({ mergeRequest: null, ciSkip: true });
  });
});
