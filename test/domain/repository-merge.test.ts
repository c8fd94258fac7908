import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTrees, type FileEntry } from '../../src/domain/repository/files.js';
import { blobsToRead, isBinary, mergeText, mergeTrees } from '../../src/domain/repository/merge.js';
import { blob, commit, type GitObject, type Mode, MODES } from '../../src/domain/repository/objects.js';

/** Every merge below is checked against git 2.39's own: `git merge-tree --write-tree` in a scratch bare repository. */
const dir = mkdtempSync(join(tmpdir(), 'forgelog-merge-'));
execFileSync('/usr/bin/git', ['init', '--bare', '-q', dir]);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(object: GitObject) {
  const folder = join(dir, 'objects', object.sha.slice(0, 2));
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, object.sha.slice(2)), deflateSync(Buffer.concat([Buffer.from(`${object.type} ${object.content.length}\0`), object.content])));
}

type Spec = Record<string, string | Buffer | { content: string | Buffer; mode: Mode }>;
const contents = new Map<string, Uint8Array>();
const who = { name: 'A U Thor', email: 'author@example.com', time: 1_600_000_000, tzOffset: 0 };

/** A commit of these files (on `parent`), written to the scratch repository. */
function side(spec: Spec, parent?: string) {
  const files = new Map<string, FileEntry>();
  for (const [path, value] of Object.entries(spec)) {
    const { content, mode } = typeof value === 'string' || Buffer.isBuffer(value) ? { content: value, mode: MODES.file as Mode } : value;
    const object = blob(typeof content === 'string' ? content : new Uint8Array(content));
    write(object);
    contents.set(object.sha, object.content);
    files.set(path, { mode, sha: object.sha });
  }
  const { root, trees } = buildTrees(files);
  trees.forEach(write);
  const made = commit({ tree: root, parents: parent ? [parent] : [], author: who, committer: who, message: 'x\n' });
  write(made);
  return { files, sha: made.sha, tree: root };
}

/** git's merge of ours and theirs: the tree (clean) or the conflicted paths. */
function gitMerge(ours: string, theirs: string): { clean: boolean; tree: string; conflicted: string[] } {
  const run = spawnSync('/usr/bin/git', ['merge-tree', '--write-tree', '--name-only', '--no-messages', ours, theirs], { cwd: dir });
  if (run.status !== 0 && run.status !== 1) throw new Error(run.stderr.toString());
  const [tree, ...rest] = run.stdout.toString().split('\n').filter((l) => l !== '');
  // A file in a directory's way is written aside as `path~<commit>`: the conflict is on `path`.
  return { clean: run.status === 0, tree: tree!, conflicted: [...new Set(rest.map((p) => p.replace(/~[0-9a-f]{40}$/, '')))].sort() };
}

function both(base: Spec, ours: Spec, theirs: Spec) {
  const o = side(base);
  const a = side(ours, o.sha);
  const b = side(theirs, o.sha);
  const needed = blobsToRead(o.files, a.files, b.files);
  const merge = mergeTrees(o.files, a.files, b.files, new Map(needed.map((sha) => [sha, contents.get(sha)!])));
  const git = gitMerge(a.sha, b.sha);
  return { merge, git, tree: merge.conflicts.length === 0 ? buildTrees(merge.files).root : undefined };
}

/** Ours and git agree: the same tree when clean, the same conflicted paths otherwise. */
function agrees(base: Spec, ours: Spec, theirs: Spec) {
  const { merge, git, tree } = both(base, ours, theirs);
  expect(merge.conflicts.map((c) => c.path)).toEqual(git.conflicted);
  expect(git.clean).toBe(merge.conflicts.length === 0);
  if (git.clean) expect(tree).toBe(git.tree);
  return merge;
}

const text = (...lines: string[]) => lines.map((l) => `${l}\n`).join('');
const ten = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const edit = (at: Record<number, string | null>, extra: Record<number, string[]> = {}) =>
  text(...ten.flatMap((line, i) => [...(at[i] === null ? [] : [at[i] ?? line]), ...(extra[i] ?? [])]));

describe('mergeTrees (against git merge-tree)', () => {
  it('takes each side’s change to different files, and both sides’ additions and deletions', () => {
    const merge = agrees(
      { 'a.txt': 'a\n', 'b.txt': 'b\n', 'gone.txt': 'x\n', 'dir/kept.txt': 'k\n', 'dir/gone.txt': 'g\n' },
      { 'a.txt': 'A\n', 'b.txt': 'b\n', 'dir/kept.txt': 'k\n', 'dir/gone.txt': 'g\n', 'ours/new.txt': 'n\n' },
      { 'a.txt': 'a\n', 'b.txt': 'B\n', 'gone.txt': 'x\n', 'dir/kept.txt': 'k\n', 'theirs.txt': 't\n' },
    );
    expect(merge.conflicts).toEqual([]);
    expect([...merge.files.keys()].sort()).toEqual(['a.txt', 'b.txt', 'dir/kept.txt', 'ours/new.txt', 'theirs.txt']);
    expect(merge.blobs).toEqual([]);
  });

  it('takes an identical change made on both sides (content, deletion, addition)', () => {
    const merge = agrees({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, { 'a.txt': 'same\n', 'c.txt': 'c\n' }, { 'a.txt': 'same\n', 'c.txt': 'c\n' });
    expect(merge.conflicts).toEqual([]);
  });

  it('merges line by line the changes both sides made to different parts of a text file', () => {
    const merge = agrees({ 'f.txt': edit({}) }, { 'f.txt': edit({ 1: 'TWO' }, { 3: ['inserted'] }) }, { 'f.txt': edit({ 7: 'EIGHT', 9: null }) });
    expect(merge.blobs).toHaveLength(1);
    expect(new TextDecoder().decode(merge.blobs[0]!.content)).toBe(text('one', 'TWO', 'three', 'four', 'inserted', 'five', 'six', 'seven', 'EIGHT', 'nine'));
  });

  it('merges the same change made on both sides plus another on one side', () => {
    agrees({ 'f.txt': edit({}) }, { 'f.txt': edit({ 1: 'TWO', 8: 'NINE' }) }, { 'f.txt': edit({ 1: 'TWO' }) });
  });

  it('is a content conflict when both sides change the same line differently', () => {
    const merge = agrees({ 'f.txt': edit({}), 'other.txt': 'o\n' }, { 'f.txt': edit({ 4: 'ours' }), 'other.txt': 'O\n' }, { 'f.txt': edit({ 4: 'theirs' }), 'other.txt': 'o\n' });
    expect(merge.conflicts).toEqual([{ path: 'f.txt', kind: 'content' }]);
    expect(merge.files.get('other.txt')?.sha).toBe(blob('O\n').sha);
  });

  it('is a content conflict when the changes touch (adjacent lines), as in git', () => {
    const merge = agrees({ 'f.txt': edit({}) }, { 'f.txt': edit({ 4: 'ours' }) }, { 'f.txt': edit({ 5: 'theirs' }) });
    expect(merge.conflicts).toEqual([{ path: 'f.txt', kind: 'content' }]);
  });

  it('merges changes separated by one unchanged line', () => {
    agrees({ 'f.txt': edit({}) }, { 'f.txt': edit({ 3: 'ours' }) }, { 'f.txt': edit({ 5: 'theirs' }) });
  });

  it('treats a missing final newline as a change of the last line', () => {
    const base = text('a', 'b', 'c', 'd', 'e');
    agrees({ 'f.txt': base }, { 'f.txt': base.slice(0, -1) }, { 'f.txt': text('A', 'b', 'c', 'd', 'e') });
    const merge = agrees({ 'f.txt': base }, { 'f.txt': base.slice(0, -1) }, { 'f.txt': text('a', 'b', 'c', 'd', 'E') });
    expect(merge.conflicts).toEqual([{ path: 'f.txt', kind: 'content' }]);
  });

  it('is an add/add conflict when both add a path with different content, clean with the same', () => {
    expect(agrees({ 'a.txt': 'a\n' }, { 'a.txt': 'a\n', 'new.txt': 'ours\n' }, { 'a.txt': 'a\n', 'new.txt': 'theirs\n' }).conflicts).toEqual([{ path: 'new.txt', kind: 'add/add' }]);
    expect(agrees({ 'a.txt': 'a\n' }, { 'a.txt': 'a\n', 'new.txt': 'same\n' }, { 'a.txt': 'a\n', 'new.txt': 'same\n' }).conflicts).toEqual([]);
  });

  it('is a modify/delete conflict when one side changes what the other deletes; a deletion of the unchanged is clean', () => {
    const merge = agrees({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, { 'a.txt': 'A\n' }, { 'b.txt': 'b\n' });
    expect(merge.conflicts).toEqual([{ path: 'a.txt', kind: 'modify/delete' }]);
    expect(agrees({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, { 'b.txt': 'b\n' }, { 'a.txt': 'a\n', 'b.txt': 'B\n' }).conflicts).toEqual([]);
  });

  it('is a binary conflict when a binary file changes on both sides; one side’s change is clean', () => {
    const bin = (n: number) => Buffer.from([0, 1, 2, n, 0, 10]);
    expect(agrees({ 'img.png': bin(1) }, { 'img.png': bin(2) }, { 'img.png': bin(3) }).conflicts).toEqual([{ path: 'img.png', kind: 'binary' }]);
    expect(agrees({ 'img.png': bin(1), 'a.txt': 'a\n' }, { 'img.png': bin(2), 'a.txt': 'a\n' }, { 'img.png': bin(1), 'a.txt': 'A\n' }).conflicts).toEqual([]);
    expect(isBinary(bin(1))).toBe(true);
    expect(isBinary(Buffer.from('text\n'))).toBe(false);
  });

  it('takes a mode change on one side with a content change on the other', () => {
    const merge = agrees({ 'run.sh': edit({}) }, { 'run.sh': { content: edit({}), mode: MODES.executable } }, { 'run.sh': edit({ 0: 'ONE' }) });
    expect(merge.files.get('run.sh')).toEqual({ mode: MODES.executable, sha: blob(edit({ 0: 'ONE' })).sha });
    agrees({ 'run.sh': edit({}) }, { 'run.sh': { content: edit({ 9: 'TEN' }), mode: MODES.executable } }, { 'run.sh': edit({ 0: 'ONE' }) });
  });

  it('decides a mode change on both sides and an add/add of the same content with different modes as git', () => {
    agrees({ 'run.sh': 'x\n' }, { 'run.sh': { content: 'x\n', mode: MODES.executable } }, { 'run.sh': { content: 'x\n', mode: MODES.executable } });
    agrees({ 'a.txt': 'a\n' }, { 'a.txt': 'a\n', 'new.sh': { content: 'x\n', mode: MODES.executable } }, { 'a.txt': 'a\n', 'new.sh': 'x\n' });
    agrees({ link: { content: 'a.txt', mode: MODES.symlink } }, { link: { content: 'b.txt', mode: MODES.symlink } }, { link: { content: 'c.txt', mode: MODES.symlink } });
  });

  it('is a conflict when one side has a file where the other has a directory', () => {
    const merge = agrees({ 'a.txt': 'a\n' }, { 'a.txt': 'a\n', thing: 'file\n' }, { 'a.txt': 'a\n', 'thing/inside.txt': 'dir\n' });
    expect(merge.conflicts).toEqual([{ path: 'thing', kind: 'file/directory' }]);
  });

  it('agrees with git on random line edits of both sides', () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const mutate = (lines: string[]) => {
      const out = [...lines];
      for (let k = 0, n = 1 + random(3); k < n; k++) {
        const at = random(out.length + 1);
        const op = random(3);
        if (op === 0) out.splice(at, 0, `new ${random(1000)}`);
        else if (op === 1 && at < out.length) out.splice(at, 1);
        else if (at < out.length) out[at] = `changed ${random(1000)}`;
      }
      return out;
    };
    for (let round = 0; round < 60; round++) {
      const base = ten.slice(0, 4 + random(7));
      agrees({ 'f.txt': text(...base) }, { 'f.txt': text(...mutate(base)) }, { 'f.txt': text(...mutate(base)) });
    }
  });
});

describe('mergeTrees on random trees (against git merge-tree)', () => {
  it('agrees with git when both sides add, delete, edit, chmod and binarise files at random', () => {
    let seed = 1234;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pool = ['a.txt', 'b.txt', 'c.txt', 'd/e.txt', 'd/f.txt', 'd/g/h.txt', 'i.txt', 'j.txt'];
    type Value = { content: string | Buffer; mode: Mode };
    const editLines = (text: string) => {
      const out = text.split('\n').slice(0, -1);
      const at = random(out.length + 1);
      if (random(2) === 0) out.splice(at, 0, `new ${random(100)}`);
      else if (at < out.length) out[at] = `changed ${random(100)}`;
      return out.map((l) => `${l}\n`).join('');
    };
    const mutate = (base: Record<string, Value>) => {
      const out: Record<string, Value> = { ...base };
      for (let k = 0, n = 1 + random(4); k < n; k++) {
        const path = pool[random(pool.length)]!;
        const current = out[path];
        const op = random(5);
        if (!current) out[path] = { content: text(`added ${random(3)}`), mode: random(4) === 0 ? MODES.executable : MODES.file };
        else if (op === 0) delete out[path];
        else if (op === 1) out[path] = { ...current, mode: current.mode === MODES.file ? MODES.executable : MODES.file };
        else if (op === 2) out[path] = { ...current, content: Buffer.from([0, random(4), 10]) };
        else if (typeof current.content === 'string') out[path] = { ...current, content: editLines(current.content) };
      }
      return out;
    };
    for (let round = 0; round < 60; round++) {
      const base: Record<string, Value> = {};
      for (const path of pool) if (random(3) > 0) base[path] = { content: text(...ten.slice(0, 3 + random(5))), mode: MODES.file };
      agrees(base, mutate(base), mutate(base));
    }
  });
});

describe('mergeText', () => {
  it('returns null on a conflict and the merged bytes otherwise, keeping non-UTF-8 bytes', () => {
    const latin = Buffer.from([0xe9, 0x0a]);
    expect(mergeText(Buffer.from('a\nb\n'), Buffer.from('A\nb\n'), Buffer.from('B\nb\n'))).toBeNull();
    expect(Buffer.from(mergeText(Buffer.concat([latin, Buffer.from('x\ny\nz\n')]), Buffer.concat([latin, Buffer.from('X\ny\nz\n')]), Buffer.concat([latin, Buffer.from('x\ny\nZ\n')]))!)).toEqual(
      Buffer.concat([latin, Buffer.from('X\ny\nZ\n')]),
    );
  });
});
