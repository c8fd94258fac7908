import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMergeCommit, divergedCommitsCount, type MergeCommitInput } from '../../src/commands/repository-merge.js';
import { DomainError } from '../../src/domain/errors.js';
import { commitsBetween, isAncestor, mergeBase, mergeBases } from '../../src/projections/repository/history.js';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { mergeability, mergeTreesOf } from '../../src/projections/repository/merges.js';
import { forgetCommitNodes } from '../../src/projections/repository/commit-graph.js';
import { inOneTransaction } from '../../src/database/savepoints.js';
import { buildTrees } from '../../src/domain/repository/files.js';
import { blobsToRead, mergeTrees } from '../../src/domain/repository/merge.js';
import { storeObjects } from '../../src/commands/repository.js';
import { commit, type GitObject, tree } from '../../src/domain/repository/objects.js';
import { commitLog, commitLogPage, findCommits, forgetCommits, forgetTrees, readBlobs, readFiles, readTrees } from '../../src/projections/repository/queries.js';
import { backfill } from '../../migrations/0059_repository_commit_graph.js';
import { backfill as firstParentBackfill } from '../../migrations/0076_first_parent_depth.js';

let api: TestServer;
const dirs: string[] = [];
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await api.close();
});

const create = (path: string, content: string) => ({ action: 'create', file_path: path, content });
const update = (path: string, content: string) => ({ action: 'update', file_path: path, content });
const ten = (change: Record<number, string> = {}) => Array.from({ length: 10 }, (_, i) => `${change[i] ?? `line ${i + 1}`}\n`).join('');

async function push(projectId: number, branch: string, actions: object[], startBranch?: string): Promise<string> {
  const res = await api.post(`/projects/${projectId}/repository/commits`, { branch, start_branch: startBranch, commit_message: `on ${branch}\n`, actions });
  expect(res.status).toBe(201);
  return res.body.id;
}

/**
 * The project's object store as a bare repository git reads (loose objects, zlib-deflated);
 * with `commitGraph`, a commit-graph file of its commits too: without it each `git rev-list`
 * or `merge-base` on a history of 2,000 commits inflates every commit again (~50 ms a call).
 * git's one merge base (`merge-base` without `--all`) of a criss-cross can differ with the
 * graph, which changes the order git walks in.
 */
async function exported(projectId: number, options: { commitGraph?: boolean } = {}): Promise<(...args: string[]) => string> {
  const dir = mkdtempSync(join(tmpdir(), 'forgelog-merge-'));
  dirs.push(dir);
  execFileSync('/usr/bin/git', ['init', '--bare', '-q', dir]);
  const { rows } = await sql<{ sha: string; type: string; content: Buffer }>`select sha, type, content from repository_objects where project_id = ${projectId}`.execute(api.handle.db);
  for (const row of rows) {
    mkdirSync(join(dir, 'objects', row.sha.slice(0, 2)), { recursive: true });
    writeFileSync(join(dir, 'objects', row.sha.slice(0, 2), row.sha.slice(2)), deflateSync(Buffer.concat([Buffer.from(`${row.type} ${row.content.length}\0`), Buffer.from(row.content)])));
  }
  if (options.commitGraph) {
    const commits = rows.filter((row) => row.type === 'commit').map((row) => row.sha);
    execFileSync('/usr/bin/git', ['commit-graph', 'write', '--stdin-commits'], { cwd: dir, input: commits.join('\n') });
  }
  return (...args: string[]) => {
    const run = spawnSync('/usr/bin/git', args, { cwd: dir });
    if (run.status !== 0 && !(args[0] === 'merge-tree' && run.status === 1)) throw new Error(`git ${args.join(' ')}: ${run.stderr.toString()}`);
    return run.stdout.toString().trim();
  };
}

const lines = (text: string) => (text === '' ? [] : text.split('\n'));
const merge = (projectId: number, input: Omit<MergeCommitInput, 'author' | 'committer' | 'time'> & Partial<MergeCommitInput>) =>
  api.handle.db.transaction().execute((trx) =>
    createMergeCommit(trx, projectId, {
      author: { name: 'Merger', email: 'merger@example.com' },
      committer: { name: 'Merger', email: 'merger@example.com' },
      time: 1_700_000_000,
      ...input,
    }),
  );
const objectCount = async (projectId: number) =>
  Number((await sql<{ n: string }>`select count(*) as n from repository_objects where project_id = ${projectId}`.execute(api.handle.db)).rows[0]!.n);

describe('history (against git merge-base and git rev-list)', () => {
  it('finds merge bases, the commits between two commits and ancestry as git does, across merges', async () => {
    const { id } = await createProject(api);
    const db = api.handle.db;
    await push(id, 'master', [create('a.txt', ten()), create('b.txt', 'b\n')]);
    const c2 = await push(id, 'master', [update('b.txt', 'b2\n')]);
    const f1 = await push(id, 'feature', [update('a.txt', ten({ 0: 'feature' }))], 'master');
    const f2 = await push(id, 'feature', [create('f.txt', 'f\n')]);
    const m3 = await push(id, 'master', [update('a.txt', ten({ 9: 'master' }))]);
    // Merge the feature into master (a commit no ref points at yet), then both sides go on.
    const { sha: m4 } = await merge(id, { targetSha: m3, sourceSha: f2, message: 'Merge feature\n', time: 1_700_000_100 });
    const f3 = await push(id, 'feature', [create('g.txt', 'g\n')]);
    // A second, criss-cross merge: master into feature (ours: feature).
    const { sha: f4 } = await merge(id, { targetSha: f3, sourceSha: m3, message: 'Merge master\n', time: 1_700_000_200 });
    const git = await exported(id);

    const pairs: [string, string][] = [
      [f2, m3],
      [m3, f2],
      [m4, f3],
      [f4, m4],
      [m4, c2],
      [c2, c2],
      [f1, f4],
    ];
    for (const [a, b] of pairs) {
      expect(await mergeBase(db, id, a, b)).toBe(git('merge-base', a, b));
      expect((await mergeBases(db, id, a, b)).sort()).toEqual(lines(git('merge-base', '--all', a, b)).sort());
      expect(await commitsBetween(db, id, a, b)).toEqual(lines(git('rev-list', b, `^${a}`)));
      expect(await divergedCommitsCount(db, id, a, b)).toBe(Number(git('rev-list', '--count', `${a}..${b}`)));
      expect(await isAncestor(db, id, a, b)).toBe(lines(git('rev-list', b)).includes(a));
    }
    for (const tip of [m4, f4, f2]) expect(await commitsBetween(db, id, null, tip)).toEqual(lines(git('rev-list', tip)));
    expect(await mergeBase(db, id, m4, f2)).toBe(f2);
    expect(await isAncestor(db, id, f2, m4)).toBe(true);
    expect(await isAncestor(db, id, m4, f2)).toBe(false);
  });

  it('agrees with git on a random history of pushes, branches and merges (ties and skewed clocks)', async () => {
    const { id } = await createProject(api);
    const db = api.handle.db;
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const heads = new Map<string, string>([['master', await push(id, 'master', [create('0.txt', '0\n')])]]);
    const now = Math.floor(Date.now() / 1000);
    for (let step = 1; step <= 14; step++) {
      const names = [...heads.keys()];
      const pick = () => names[random(names.length)]!;
      const op = random(3);
      if (op === 0) {
        const branch = pick();
        heads.set(branch, await push(id, branch, [create(`${step}.txt`, `${step}\n`)]));
      } else if (op === 1) {
        const from = pick();
        expect((await api.post(`/projects/${id}/repository/branches`, { branch: `b${step}`, ref: heads.get(from) })).status).toBe(201);
        heads.set(`b${step}`, await push(id, `b${step}`, [create(`${step}.txt`, `${step}\n`)]));
      } else {
        const [target, source] = [pick(), pick()];
        const { sha } = await merge(id, { targetSha: heads.get(target)!, sourceSha: heads.get(source)!, message: `Merge ${step}\n`, time: now + random(5) - 2 });
        expect((await api.post(`/projects/${id}/repository/branches`, { branch: `m${step}`, ref: sha })).status).toBe(201);
        heads.set(`m${step}`, sha);
      }
    }
    const git = await exported(id);
    const tips = [...new Set(heads.values())];
    for (const a of tips) {
      expect(await commitsBetween(db, id, null, a)).toEqual(lines(git('rev-list', a)));
      for (const b of tips) {
        expect(await mergeBase(db, id, a, b)).toBe(git('merge-base', a, b));
        expect((await mergeBases(db, id, a, b)).sort()).toEqual(lines(git('merge-base', '--all', a, b)).sort());
        expect(await commitsBetween(db, id, a, b)).toEqual(lines(git('rev-list', b, `^${a}`)));
      }
    }
  });

  it('walks the same from the commit cache, whatever windows of the history it holds, as from the database', async () => {
    const { id } = await createProject(api);
    const db = api.handle.db;
    // Deeper than a walk's first window (64 to 128 generations), so that walks need several.
    const master: string[] = [await push(id, 'master', [create('0.txt', '0\n')])];
    const sides: string[] = [];
    let line = 'master';
    for (let step = 1; step <= 150; step++) {
      master.push(await push(id, line, [create(`m${step}.txt`, `${step}\n`)]));
      if (step % 30 !== 0) continue;
      // A side branch of the line merged into it; the line goes on from the merge.
      expect((await api.post(`/projects/${id}/repository/branches`, { branch: `side${step}`, ref: master.at(-2) })).status).toBe(201);
      const side = await push(id, `side${step}`, [create(`side${step}.txt`, 'x\n')]);
      const { sha } = await merge(id, { targetSha: master.at(-1)!, sourceSha: side, message: `Merge ${step}\n` });
      line = `line${step}`;
      expect((await api.post(`/projects/${id}/repository/branches`, { branch: line, ref: sha })).status).toBe(201);
      master.push(sha);
      sides.push(side);
    }
    const git = await exported(id);
    const tips = [master.at(-1)!, master[140]!, master[70]!, master[5]!, ...sides];
    const expected = new Map<string, unknown>();
    const answers = async (a: string, b: string) => ({
      base: await mergeBase(db, id, a, b),
      between: await commitsBetween(db, id, a, b),
      ancestor: await isAncestor(db, id, a, b),
    });
    for (const a of tips) for (const b of tips) expected.set(`${a} ${b}`, { base: git('merge-base', a, b), between: lines(git('rev-list', b, `^${a}`)), ancestor: lines(git('rev-list', b)).includes(a) });
    let seed = 11;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (const a of tips) {
      for (const b of tips) {
        // A cold cache, then one that holds the windows of another pair's walks, then a warm one.
        forgetCommitNodes(api.handle.db);
        expect(await answers(a, b)).toEqual(expected.get(`${a} ${b}`));
        forgetCommitNodes(api.handle.db);
        await mergeBase(db, id, tips[random(tips.length)]!, tips[random(tips.length)]!);
        expect(await answers(a, b)).toEqual(expected.get(`${a} ${b}`));
        expect(await answers(a, b)).toEqual(expected.get(`${a} ${b}`));
      }
    }
  });

  it('keeps no commit or tree a transaction read of its own writes once it rolls back', async () => {
    const { id } = await createProject(api);
    const head = await push(id, 'master', [create('a.txt', 'a\n')]);
    const db = api.handle.db;
    const phantom = 'e'.repeat(40);
    const phantomTree = tree([{ mode: '100644', name: 'phantom.txt', sha: 'd'.repeat(40) }]);
    const someone = { name: 'Phantom', email: 'phantom@example.com', time: 1700000000, tzOffset: 0 };
    const phantomCommit = commit({ tree: phantomTree.sha, parents: [head], author: someone, committer: someone, message: 'Phantom\n' });
    forgetCommitNodes(api.handle.db);
    forgetTrees(api.handle.db);
    forgetCommits(api.handle.db);
    await db
      .transaction()
      .execute(async (trx) => {
        // A commit row written and read in the transaction, as a push stores then walks its commits.
        await sql`insert into repository_commits (project_id, sha, parents, generation, committer_time, ancestors, first_parent_depth)
                  values (${id}, ${phantom}, ${[head]}::text[], 2, 1700000000, 2, 2)`.execute(trx);
        expect(await mergeBase(trx, id, head, phantom)).toBe(head);
        expect(await commitsBetween(trx, id, head, phantom)).toEqual([phantom]);
        await sql`insert into repository_objects (project_id, sha, type, size, content) values (${id}, ${phantomTree.sha}, 'tree', ${phantomTree.content.length}, ${Buffer.from(phantomTree.content)})`.execute(trx);
        expect((await readTrees(trx, id, [phantomTree.sha])).get(phantomTree.sha)).toEqual([{ mode: '100644', name: 'phantom.txt', sha: 'd'.repeat(40) }]);
        await sql`insert into repository_objects (project_id, sha, type, size, content) values (${id}, ${phantomCommit.sha}, 'commit', ${phantomCommit.content.length}, ${Buffer.from(phantomCommit.content)})`.execute(trx);
        expect((await findCommits(trx, id, [head, phantomCommit.sha])).map((c) => [c.sha, c.message])).toEqual([
          [head, expect.any(String)],
          [phantomCommit.sha, 'Phantom\n'],
        ]);
        throw new Error('rolled back');
      })
      .catch((error: Error) => expect(error.message).toBe('rolled back'));
    expect(await mergeBase(db, id, head, phantom)).toBeNull();
    expect(await commitsBetween(db, id, head, phantom)).toEqual([]);
    expect((await readTrees(db, id, [phantomTree.sha])).size).toBe(0);
    expect((await findCommits(db, id, [phantomCommit.sha, head])).map((c) => c.sha)).toEqual([head]);
  });

  it('keeps nothing a request in one transaction read once that transaction rolls back (Idempotency-Key)', async () => {
    const { id } = await createProject(api);
    const head = await push(id, 'master', [create('a.txt', 'a\n')]);
    const db = api.handle.db;
    const phantom = 'c'.repeat(40);
    forgetCommitNodes(api.handle.db);
    await inOneTransaction(db, async (request) => {
      await sql`insert into repository_commits (project_id, sha, parents, generation, committer_time, ancestors, first_parent_depth)
                values (${id}, ${phantom}, ${[head]}::text[], 2, 1700000000, 2, 2)`.execute(request);
      // Read through the request's Db (no transaction to kysely) and through a command's savepoint.
      expect(await mergeBase(request, id, head, phantom)).toBe(head);
      await request.transaction().execute(async (savepoint) => expect(await commitsBetween(savepoint, id, head, phantom)).toEqual([phantom]));
      throw new Error('rolled back');
    }).catch((error: Error) => expect(error.message).toBe('rolled back'));
    expect(await mergeBase(db, id, head, phantom)).toBeNull();
    expect(await commitsBetween(db, id, head, phantom)).toEqual([]);
  });

  it('reads a tree from the process cache only for the project that stored it, and never lets a reader change it', async () => {
    const one = await createProject(api);
    const other = await createProject(api);
    await push(one.id, 'master', [create('dir/a.txt', 'a\n')]);
    const root = (await api.get(`/projects/${one.id}/repository/tree`)).body.find((e: { name: string }) => e.name === 'dir').id as string;
    const read = await readTrees(api.handle.db, one.id, [root]);
    expect(read.get(root)).toMatchObject([{ name: 'a.txt', mode: '100644' }]);
    expect(() => (read.get(root) as { name: string }[]).push({ name: 'b' })).toThrow(TypeError);
    expect((await readTrees(api.handle.db, one.id, [root])).get(root)).toHaveLength(1);
    expect((await readTrees(api.handle.db, other.id, [root])).size).toBe(0);
  });

  it('answers null and nothing for commits that share no history or do not exist', async () => {
    const { id } = await createProject(api);
    const db = api.handle.db;
    const a = await push(id, 'master', [create('a.txt', 'a\n')]);
    const other = await createProject(api);
    const foreign = await push(other.id, 'master', [create('x.txt', 'x\n')]);
    expect(await mergeBase(db, id, a, foreign)).toBeNull();
    expect(await mergeBase(db, id, a, 'f'.repeat(40))).toBeNull();
    expect(await commitsBetween(db, id, null, foreign)).toEqual([]);
    expect(await commitsBetween(db, id, a, a)).toEqual([]);
    expect(await isAncestor(db, id, foreign, a)).toBe(false);
  });
});

describe('mergeability and createMergeCommit (against git merge-tree, cat-file and fsck)', () => {
  it('merges changes to different parts of a file and different files into a merge commit git reads, with git’s tree', async () => {
    const { id } = await createProject(api);
    const base = await push(id, 'master', [create('a.txt', ten()), create('dir/b.txt', 'b\n'), create('gone.txt', 'x\n')]);
    const source = await push(id, 'feature', [update('a.txt', ten({ 1: 'feature' })), create('dir/new.txt', 'new\n'), { action: 'delete', file_path: 'gone.txt' }], 'master');
    const target = await push(id, 'master', [update('a.txt', ten({ 8: 'master' })), update('dir/b.txt', 'B\n')]);
    expect(await mergeability(api.handle.db, id, source, target)).toEqual({ canBeMerged: true, conflicts: [], mergeBase: base });

    const before = await objectCount(id);
    const result = await merge(id, { targetSha: target, sourceSha: source, message: "Merge branch 'feature' into 'master'\n\nFeature\n\nSee merge request group/project!1" });
    expect(result.squashSha).toBeNull();
    expect(await objectCount(id)).toBe(before + 4); // the merged a.txt, dir/, the root tree, the commit
    const git = await exported(id);
    expect(git('cat-file', '-p', result.sha)).toBe(
      [
        `tree ${git('merge-tree', '--write-tree', target, source)}`,
        `parent ${target}`,
        `parent ${source}`,
        'author Merger <merger@example.com> 1700000000 +0000',
        'committer Merger <merger@example.com> 1700000000 +0000',
        '',
        "Merge branch 'feature' into 'master'",
        '',
        'Feature',
        '',
        'See merge request group/project!1',
      ].join('\n'),
    );
    expect(git('cat-file', '-p', `${result.sha}:a.txt`)).toBe(ten({ 1: 'feature', 8: 'master' }).trimEnd());
    expect(git('ls-tree', '-r', '--name-only', result.sha)).toBe('a.txt\ndir/b.txt\ndir/new.txt');
    git('update-ref', 'refs/heads/master', result.sha);
    git('fsck', '--strict', '--no-dangling');
    expect(lines(git('rev-list', result.sha))).toEqual(await commitsBetween(api.handle.db, id, null, result.sha));
  });

  it('reports the conflicts and refuses the merge commit with 406 Branch cannot be merged, writing nothing', async () => {
    const { id } = await createProject(api);
    await push(id, 'master', [create('a.txt', ten()), create('b.txt', 'b\n'), create('c.txt', 'c\n')]);
    const source = await push(id, 'feature', [update('a.txt', ten({ 4: 'feature' })), update('b.txt', 'feature\n'), create('new.txt', 'feature\n')], 'master');
    const target = await push(id, 'master', [update('a.txt', ten({ 4: 'master' })), { action: 'delete', file_path: 'b.txt' }, create('new.txt', 'master\n'), update('c.txt', 'C\n')]);
    const checked = await mergeability(api.handle.db, id, source, target);
    expect(checked).toMatchObject({
      canBeMerged: false,
      conflicts: [
        { path: 'a.txt', kind: 'content' },
        { path: 'b.txt', kind: 'modify/delete' },
        { path: 'new.txt', kind: 'add/add' },
      ],
    });
    const git = await exported(id);
    const gitConflicts = lines(git('merge-tree', '--write-tree', '--name-only', '--no-messages', target, source)).slice(1);
    expect(checked.conflicts.map((c) => c.path)).toEqual([...new Set(gitConflicts)].sort());

    const before = await objectCount(id);
    const refused = await merge(id, { targetSha: target, sourceSha: source, message: 'Merge\n' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'not_acceptable', text: 'Branch cannot be merged' });
    expect(await objectCount(id)).toBe(before);
  });

  it('squashes the source’s changes into one commit on the target, then merges it', async () => {
    const { id } = await createProject(api);
    const base = await push(id, 'master', [create('a.txt', ten())]);
    await push(id, 'feature', [update('a.txt', ten({ 0: 'one' }))], 'master');
    const source = await push(id, 'feature', [create('b.txt', 'two\n')]);
    const target = await push(id, 'master', [create('c.txt', 'master\n')]);
    const result = await merge(id, {
      targetSha: target,
      sourceSha: source,
      message: 'Merge feature\n',
      squash: { message: 'Feature in one\n', author: { name: 'Author', email: 'author@example.com' } },
    });
    const git = await exported(id);
    const mergedTree = git('merge-tree', '--write-tree', target, source);
    expect(git('log', '--format=%H %P|%T|%an|%cn|%s', result.sha, `^${target}`).split('\n')).toEqual([
      `${result.sha} ${target} ${result.squashSha}|${mergedTree}|Merger|Merger|Merge feature`,
      `${result.squashSha} ${target}|${mergedTree}|Author|Merger|Feature in one`,
    ]);
    git('update-ref', 'refs/heads/master', result.sha);
    git('fsck', '--strict', '--no-dangling');
    expect(await mergeBase(api.handle.db, id, result.sha, source)).toBe(base);
    expect(await divergedCommitsCount(api.handle.db, id, source, result.sha)).toBe(3);
  });

  it('merges a source already in the target to the target’s tree, and answers 404 for an unknown commit', async () => {
    const { id } = await createProject(api);
    const first = await push(id, 'master', [create('a.txt', 'a\n')]);
    const target = await push(id, 'master', [update('a.txt', 'A\n')]);
    expect(await mergeability(api.handle.db, id, first, target)).toEqual({ canBeMerged: true, conflicts: [], mergeBase: first });
    const result = await merge(id, { targetSha: target, sourceSha: first, message: 'Merge\n' });
    const git = await exported(id);
    expect(git('rev-parse', `${result.sha}^{tree}`)).toBe(git('rev-parse', `${target}^{tree}`));
    await expect(mergeability(api.handle.db, id, 'f'.repeat(40), target)).rejects.toMatchObject({ code: 'not_found', subject: 'Commit' });
  });

  it('merges by subtrees: unchanged directories are taken unread, a deep change merged, a file turned directory merged as git does', async () => {
    const { id } = await createProject(api);
    const wide = Array.from({ length: 20 }, (_, i) => create(`keep/d${i}/f.txt`, `${i}\n`));
    const base = await push(id, 'master', [...wide, create('deep/one/two/f.txt', ten()), create('deep/one/other.txt', 'o\n'), create('mix', 'file\n'), create('top.txt', 't\n')]);
    const sourceActions = [update('deep/one/two/f.txt', ten({ 1: 'feature' })), create('deep/new/n.txt', 'n\n'), { action: 'delete', file_path: 'mix' }, create('mix/b.txt', 'b\n')];
    const source = await push(id, 'feature', sourceActions, 'master');
    const target = await push(id, 'master', [update('deep/one/two/f.txt', ten({ 8: 'master' })), { action: 'delete', file_path: 'mix' }, create('mix/a.txt', 'a\n'), update('top.txt', 'T\n')]);
    const git = await exported(id);
    const gitTree = git('merge-tree', '--write-tree', target, source);
    // The flat merge (every file of the three trees) writes the same tree.
    const db = api.handle.db;
    const [flatBase, flatOurs, flatTheirs] = await Promise.all([base, target, source].map(async (sha) => readFiles(db, id, git('rev-parse', `${sha}^{tree}`))));
    const flat = mergeTrees(flatBase!, flatOurs!, flatTheirs!, await readBlobs(db, id, blobsToRead(flatBase!, flatOurs!, flatTheirs!)));
    expect(buildTrees(flat.files).root).toBe(gitTree);
    // The directory nobody changed is never read: gone from the store, the merge still answers.
    const keep = git('rev-parse', `${base}:keep`);
    const kept = lines(git('ls-tree', '-r', '-t', keep)).map((line) => line.split(/\s+/)[2]!);
    await sql`delete from repository_objects where project_id = ${id} and sha in (${sql.join([keep, ...kept])})`.execute(db);
    const merged = await mergeTreesOf(db, id, git('rev-parse', `${base}^{tree}`), git('rev-parse', `${target}^{tree}`), git('rev-parse', `${source}^{tree}`));
    expect(merged.conflicts).toEqual([]);
    expect(merged.root).toBe(gitTree);
    // Written anew: the root, deep/, deep/one/, deep/one/two/ and mix/ (deep/new/ is the source's, reused).
    expect(merged.trees.map((t) => t.sha).sort()).toEqual(
      [gitTree, ...['deep', 'deep/one', 'deep/one/two', 'mix'].map((path) => git('rev-parse', `${gitTree}:${path}`))].sort(),
    );
    expect(merged.blobs.map((b) => b.sha)).toEqual([git('rev-parse', `${gitTree}:deep/one/two/f.txt`)]);
  });

  it('reports a conflict deep in a directory next to unchanged ones, and a file/directory conflict, as the flat merge and git do', async () => {
    const { id } = await createProject(api);
    const wide = Array.from({ length: 10 }, (_, i) => create(`keep/d${i}/f.txt`, `${i}\n`));
    await push(id, 'master', [...wide, create('deep/one/two/f.txt', ten()), create('deep/one/other.txt', 'o\n')]);
    const source = await push(id, 'feature', [update('deep/one/two/f.txt', ten({ 4: 'feature' })), create('both', 'file\n'), update('deep/one/other.txt', 'O\n')], 'master');
    const target = await push(id, 'master', [update('deep/one/two/f.txt', ten({ 4: 'master' })), create('both/inner.txt', 'dir\n'), create('keep/d3/g.txt', 'g\n')]);
    const checked = await mergeability(api.handle.db, id, source, target);
    expect(checked).toMatchObject({
      canBeMerged: false,
      conflicts: [
        { path: 'both', kind: 'file/directory' },
        { path: 'deep/one/two/f.txt', kind: 'content' },
      ],
    });
    const git = await exported(id);
    const gitConflicts = lines(git('merge-tree', '--write-tree', '--name-only', '--no-messages', target, source)).slice(1);
    expect(gitConflicts).toContain('deep/one/two/f.txt');
    expect(gitConflicts.some((path) => path === 'both' || path.startsWith('both'))).toBe(true);
    await expect(merge(id, { targetSha: target, sourceSha: source, message: 'Merge\n' })).rejects.toMatchObject({ code: 'not_acceptable' });
  });

  it('does not read another project’s commits', async () => {
    const { id } = await createProject(api);
    const target = await push(id, 'master', [create('a.txt', 'a\n')]);
    const other = await createProject(api);
    await push(other.id, 'master', [create('b.txt', 'b\n')]);
    await expect(mergeability(api.handle.db, id, target, (await api.get(`/projects/${other.id}/repository/branches/master`)).body.commit.id)).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('the commit graph index (repository_commits) on a generated history of 2,000 commits', () => {
  /**
   * A history written as a push writes it (storeObjects, batches of commits with their
   * parents, children first within a batch): ~100 branches, merges and octopus merges, equal
   * committer times and skewed clocks; then every answer compared with git's.
   */
  it('answers merge bases, rev-list, ancestry, counts and log pages as git does', async () => {
    const { id } = await createProject(api);
    const db = api.handle.db;
    let seed = 11;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const root = tree([]);
    const heads = new Map<string, string>();
    const all: string[] = [];
    let pending: GitObject[] = [root];
    const make = (parents: string[], step: number) => {
      // Ties (the same second) and skew (a clock hours behind) now and then.
      const time = 1_600_000_000 + step * 10 + (random(10) === 0 ? -5000 : random(4) === 0 ? 0 : random(7));
      const who = { name: 'Gen', email: 'gen@example.com', time, tzOffset: 0 };
      const made = commit({ tree: root.sha, parents, author: who, committer: who, message: `c${step}\n` });
      pending.push(made);
      all.push(made.sha);
      return made.sha;
    };
    heads.set('master', make([], 0));
    for (let step = 1; step < 2000; step++) {
      const names = [...heads.keys()];
      const pick = () => names[random(names.length)]!;
      const op = random(20);
      if (op < 3 && heads.size < 100) heads.set(`b${step}`, make([heads.get(pick())!], step));
      else if (op < 8) {
        const [target, source] = [pick(), pick()];
        if (heads.get(target) !== heads.get(source)) heads.set(target, make([heads.get(target)!, heads.get(source)!], step));
      } else if (op === 8) {
        const parents = [...new Set([pick(), pick(), pick()].map((name) => heads.get(name)!))];
        heads.set(pick(), make(parents, step));
      } else {
        const branch = pick();
        heads.set(branch, make([heads.get(branch)!], step));
      }
      if (pending.length >= 250) {
        const batch = pending.reverse();
        await db.transaction().execute((trx) => storeObjects(trx, id, batch));
        pending = [];
      }
    }
    await db.transaction().execute((trx) => storeObjects(trx, id, pending.reverse()));
    // The graph's order gives the sampled pairs' single merge bases git gives without it: checked when this was written.
    const git = await exported(id, { commitGraph: true });
    const tips = [...new Set(heads.values())];
    expect(all.length).toBeGreaterThanOrEqual(1900);
    expect(tips.length).toBeGreaterThan(50);

    // Rows: generation is 1 + the parents' greatest, the count is git's, and the migration's backfill gives the same rows.
    const rows = async () => (await db.selectFrom('repository_commits').selectAll().where('project_id', '=', id).orderBy('sha').execute()).map((r) => ({ ...r, committer_time: Number(r.committer_time) }));
    const stored = await rows();
    expect(stored.length).toBe(all.length);
    const bySha = new Map(stored.map((row) => [row.sha, row]));
    for (const row of stored) expect(row.generation).toBe(1 + Math.max(0, ...row.parents.map((p) => bySha.get(p)!.generation)));
    for (const tip of tips) expect(bySha.get(tip)!.ancestors).toBe(Number(git('rev-list', '--count', tip)));
    for (const tip of tips.slice(0, 10)) expect(bySha.get(tip)!.first_parent_depth).toBe(Number(git('rev-list', '--count', '--first-parent', tip)));
    await db.deleteFrom('repository_commits').where('project_id', '=', id).execute();
    // 0059's backfill writes no first_parent_depth (0076 added it, NOT NULL): the rows are written as the migrations did, 0059's then 0076's.
    await db.transaction().execute(async (trx) => {
      await sql.raw('alter table repository_commits alter column first_parent_depth drop not null').execute(trx);
      await sql.raw('alter table repository_commits disable trigger repository_commits_no_update').execute(trx);
      await backfill(trx, id);
      await firstParentBackfill(trx, id);
      await sql.raw('alter table repository_commits enable trigger repository_commits_no_update').execute(trx);
      await sql.raw('alter table repository_commits alter column first_parent_depth set not null').execute(trx);
    });
    expect(await rows()).toEqual(stored);

    // The graph questions against git, for tips and commits anywhere in the history.
    const sample = [...tips.slice(0, 8), ...Array.from({ length: 8 }, () => all[random(all.length)]!)];
    const log = new Map(sample.map((sha) => [sha, lines(git('rev-list', sha))]));
    for (const a of sample.slice(0, 10)) {
      const reach = new Set(log.get(a));
      for (const b of sample.slice(6)) {
        expect(await mergeBase(db, id, a, b)).toBe(git('merge-base', a, b));
        expect((await mergeBases(db, id, a, b)).sort()).toEqual(lines(git('merge-base', '--all', a, b)).sort());
        // `git rev-list a ^b` gives up early past skewed clocks (its date heuristic); the exact answer is a's log without b's.
        const ofB = new Set(log.get(b));
        expect(await commitsBetween(db, id, b, a)).toEqual(log.get(a)!.filter((sha) => !ofB.has(sha)));
        expect(await isAncestor(db, id, b, a)).toBe(reach.has(b));
      }
    }
    expect(await commitsBetween(db, id, null, tips[0]!)).toEqual(lines(git('rev-list', tips[0]!)));

    // Log pages: git's `rev-list --skip --max-count`, and the count git gives.
    const views = await findCommits(db, id, tips);
    for (const [tip, offset] of [[views[0]!, 0], [views[1]!, 40], [views[2]!, 500]] as const) {
      const page = await commitLogPage(db, id, tip, {}, { offset, limit: 20 });
      expect(page.commits.map((c) => c.sha)).toEqual(lines(git('rev-list', `--skip=${offset}`, '--max-count=20', tip.sha)));
      expect(page.total).toBe(Number(git('rev-list', '--count', tip.sha)));
    }
    // Several heads and date filters: the same as the whole log's slice.
    const filters = { after: 1_600_005_000, before: 1_600_015_000 };
    for (const [heads, filter] of [[views.slice(0, 30), {}], [views[0]!, filters], [views.slice(0, 5), filters]] as const) {
      const whole = await commitLog(db, id, heads, filter);
      const page = await commitLogPage(db, id, heads, filter, { offset: 20, limit: 20 });
      expect(page.commits.map((c) => c.sha)).toEqual(whole.slice(20, 40).map((c) => c.sha));
      expect(page.total).toBe(whole.length);
    }
    expect((await commitLogPage(db, id, views.slice(0, 30), {}, { offset: 0, limit: 1 })).total).toBe(Number(git('rev-list', '--count', ...tips.slice(0, 30))));
  }, 240_000);
});
