import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { gitScratch, withToken } from '../support/git.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The commits a `git push` that creates branches records for each (BranchCreated's `commits`):
 * `git rev-list new --not --branches`, the branches as they were before the push — walked
 * against the default branch alone when what it lacks is new to the repository, against the
 * other branches when it holds older commits (a branch of a branch, commits of a deleted one).
 */

const { git, newDir, remove } = gitScratch('forgelog-push-new-branches-');

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(async () => {
  await api.close();
  remove();
});

async function commitFile(dir: string, path: string, message: string): Promise<string> {
  writeFileSync(join(dir, path), `${message}\n`);
  await git(['add', path], dir);
  await git(['commit', '-q', '-m', message], dir);
  return (await git(['rev-parse', 'HEAD'], dir)).trim();
}

describe('git push creating branches', () => {
  it('records for each new branch the commits no branch had before the push', async () => {
    const project = await createProject(api);
    const { http_url_to_repo: url } = (await api.get(`/projects/${project.id}`)).body as { http_url_to_repo: string };
    const dir = newDir();
    await git(['init', '-q', '-b', 'master', dir]);
    await git(['remote', 'add', 'origin', withToken(url, api.rootToken)], dir);
    const created = async (branch: string) => {
      const events = await api.events(`repository-${project.id}:refs/heads/${branch}`);
      const event = events.filter((e) => e.type === 'BranchCreated').at(-1)!;
      return [event.data.commits, event.data.commit_count];
    };

    // The first push: every commit.
    const m1 = await commitFile(dir, 'm.txt', 'M1');
    const m2 = await commitFile(dir, 'm.txt', 'M2');
    await git(['push', '-q', 'origin', 'master'], dir);
    expect(await created('master')).toEqual([[m2, m1], 2]);

    // A branch at a commit of the default branch brings none.
    await git(['push', '-q', 'origin', `${m1}:refs/heads/at-m1`], dir);
    expect(await created('at-m1')).toEqual([[], 0]);

    // Two new branches in one push, one on top of the other: the lower one's commits are new to both.
    await git(['checkout', '-q', '-b', 'lower', m2], dir);
    const l1 = await commitFile(dir, 'l.txt', 'L1');
    const l2 = await commitFile(dir, 'l.txt', 'L2');
    await git(['checkout', '-q', '-b', 'upper'], dir);
    const u1 = await commitFile(dir, 'u.txt', 'U1');
    await git(['push', '-q', 'origin', 'lower', 'upper'], dir);
    expect(await created('lower')).toEqual([[l2, l1], 2]);
    expect(await created('upper')).toEqual([[u1, l2, l1], 3]);

    // A branch of a branch the default branch lacks: only its own commit.
    await git(['checkout', '-q', '-b', 'stacked', 'lower'], dir);
    const s1 = await commitFile(dir, 's.txt', 'S1');
    await git(['push', '-q', 'origin', 'stacked'], dir);
    expect(await created('stacked')).toEqual([[s1], 1]);

    // The commits of deleted branches are stored and on no branch: a branch made at them brings them.
    await git(['push', '-q', 'origin', '--delete', 'upper', 'stacked'], dir);
    await git(['push', '-q', 'origin', `${s1}:refs/heads/revived`], dir);
    expect(await created('revived')).toEqual([[s1], 1]);
    await git(['push', '-q', 'origin', '--delete', 'lower'], dir);
    await git(['checkout', '-q', '-b', 'again', u1], dir);
    const a1 = await commitFile(dir, 'a.txt', 'A1');
    await git(['push', '-q', 'origin', 'again'], dir);
    expect(await created('again')).toEqual([[a1, u1], 2]);
  });
});
