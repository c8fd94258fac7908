import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blob, cleanIdent, commit, MODES, parseCommit, parseTree, tree, type TreeEntry } from '../../src/domain/repository/objects.js';

/** The real git (2.39) in a scratch bare repository: every SHA below is git's. */
const dir = mkdtempSync(join(tmpdir(), 'forgelog-objects-'));
execFileSync('/usr/bin/git', ['init', '--bare', '-q', dir]);
const git = (args: string[], input?: string | Buffer, env: Record<string, string> = {}) =>
  execFileSync('/usr/bin/git', args, { cwd: dir, input, env: { ...process.env, ...env } }).toString().trim();

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('git objects', () => {
  it.each([
    ['text', 'hello\n'],
    ['empty', ''],
    ['unicode', 'héllo wörld — ✓\n'],
  ])('a %s blob has the SHA of `git hash-object`', (_name, content) => {
    expect(blob(content).sha).toBe(git(['hash-object', '-w', '--stdin'], content));
  });

  it('a binary blob has the SHA of `git hash-object`', () => {
    const bytes = Buffer.from([0, 1, 2, 255, 254, 0, 10]);
    expect(blob(bytes).sha).toBe(git(['hash-object', '-w', '--stdin'], bytes));
  });

  it("a tree has `git mktree`'s SHA: git's entry order (a tree sorts as name/) and its modes", () => {
    const a = git(['hash-object', '-w', '--stdin'], 'a\n');
    const b = git(['hash-object', '-w', '--stdin'], '#!/bin/sh\n');
    const inner = git(['mktree'], `100644 blob ${a}\tx.txt\n`);
    const entries: TreeEntry[] = [
      { mode: MODES.file, name: 'foo.txt', sha: a },
      { mode: MODES.tree, name: 'foo', sha: inner },
      { mode: MODES.file, name: 'foo-bar', sha: a },
      { mode: MODES.executable, name: 'run.sh', sha: b },
      { mode: MODES.symlink, name: 'link', sha: git(['hash-object', '-w', '--stdin'], 'foo.txt') },
      { mode: MODES.file, name: 'Zeta', sha: a },
    ];
    const typeOf = (mode: string) => (mode === MODES.tree ? 'tree' : 'blob');
    const listing = entries.map((e) => `${e.mode === MODES.tree ? '040000' : e.mode} ${typeOf(e.mode)} ${e.sha}\t${e.name}`).join('\n');
    const made = tree(entries);
    expect(made.sha).toBe(git(['mktree'], `${listing}\n`));
    expect(parseTree(made.content).map((e) => e.name)).toEqual(['Zeta', 'foo-bar', 'foo.txt', 'foo', 'link', 'run.sh']);
    expect(parseTree(made.content)).toContainEqual({ mode: '40000', name: 'foo', sha: inner });
  });

  it('the empty tree is git’s', () => {
    expect(tree([]).sha).toBe('4b825dc642cb6eb9a060e54bf8d69288fbee4904');
  });

  it("a commit has `git commit-tree`'s SHA: tree, parents, author and committer with time and zone, message", () => {
    const a = git(['hash-object', '-w', '--stdin'], '# Project\n');
    const treeSha = git(['mktree'], `100644 blob ${a}\tREADME.md\n`);
    const env = (time: number, tz: string) => ({
      GIT_AUTHOR_NAME: 'Ada Lovelace',
      GIT_AUTHOR_EMAIL: 'ada@example.com',
      GIT_AUTHOR_DATE: `${time} ${tz}`,
      GIT_COMMITTER_NAME: 'Charles Babbage',
      GIT_COMMITTER_EMAIL: 'charles@example.com',
      GIT_COMMITTER_DATE: `${time + 60} ${tz}`,
    });
    const root = git(['commit-tree', treeSha], 'Initial commit', env(1_600_000_000, '+0000'));
    const first = commit({
      tree: treeSha,
      parents: [],
      author: { name: 'Ada Lovelace', email: 'ada@example.com', time: 1_600_000_000, tzOffset: 0 },
      committer: { name: 'Charles Babbage', email: 'charles@example.com', time: 1_600_000_060, tzOffset: 0 },
      message: 'Initial commit',
    });
    expect(first.sha).toBe(root);
    const other = git(['commit-tree', treeSha], 'Other root', env(1_600_000_001, '+0530'));
    // A merge: two parents, in order (git drops a repeated parent).
    const child = git(['commit-tree', treeSha, '-p', root, '-p', other], 'Two\n\nbody\n', env(1_600_000_100, '-0130'));
    const second = commit({
      tree: treeSha,
      parents: [root, other],
      author: { name: 'Ada Lovelace', email: 'ada@example.com', time: 1_600_000_100, tzOffset: -90 },
      committer: { name: 'Charles Babbage', email: 'charles@example.com', time: 1_600_000_160, tzOffset: -90 },
      message: 'Two\n\nbody\n',
    });
    expect(second.sha).toBe(child);
    expect(parseCommit(second.content)).toEqual({
      tree: treeSha,
      parents: [root, other],
      author: { name: 'Ada Lovelace', email: 'ada@example.com', time: 1_600_000_100, tzOffset: -90 },
      committer: { name: 'Charles Babbage', email: 'charles@example.com', time: 1_600_000_160, tzOffset: -90 },
      message: 'Two\n\nbody\n',
    });
  });

  it("cleans a name and an email as git's ident does, to the same commit", () => {
    const treeSha = git(['mktree'], '');
    const env = { GIT_AUTHOR_NAME: ' .Eve <x>\nevil; ', GIT_AUTHOR_EMAIL: ' <e@x>. ', GIT_AUTHOR_DATE: '1600000000 +0000', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'b', GIT_COMMITTER_DATE: '1600000000 +0000' };
    const sha = git(['commit-tree', treeSha, '-m', 'm'], undefined, env);
    const when = { time: 1_600_000_000, tzOffset: 0 };
    const made = commit({ tree: treeSha, parents: [], author: { name: cleanIdent(env.GIT_AUTHOR_NAME), email: cleanIdent(env.GIT_AUTHOR_EMAIL), ...when }, committer: { name: 'a', email: 'b', ...when }, message: 'm\n' });
    expect(cleanIdent(env.GIT_AUTHOR_NAME)).toBe('Eve xevil');
    expect(made.sha).toBe(sha);
  });
});
