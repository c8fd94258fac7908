import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type DiffEntry, diffEntries, limitDiffs, neededBlobs, treeChanges, unifiedDiff } from '../../src/domain/repository/diffs.js';
import type { FileEntry } from '../../src/domain/repository/files.js';
import { blob, type Mode } from '../../src/domain/repository/objects.js';

/**
 * Each case is two versions of a work tree, committed with the real git (2.39); the entries
 * of src/domain/repository/diffs.ts must be what `git diff <a> <b>` prints, header lines left
 * out (as Gitaly hands GitLab the patch), and `git diff --raw`'s paths, modes and statuses.
 */

type Content = string | Buffer | { link: string } | { exec: string };
type Files = Record<string, Content>;

const root = mkdtempSync(join(tmpdir(), 'forgelog-diffs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = { ...process.env, HOME: root, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' };
let counter = 0;

function writeTree(dir: string, files: Files) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    if (typeof content === 'object' && 'link' in content) symlinkSync(content.link, full);
    else if (typeof content === 'object' && 'exec' in content) {
      writeFileSync(full, content.exec);
      chmodSync(full, 0o755);
    } else writeFileSync(full, content);
  }
}

/** git's diff of the two versions: the raw lines and the patch sections' bodies. */
function gitDiff(before: Files, after: Files) {
  const repo = join(root, `r${counter++}`);
  const work = join(repo, 'w');
  const git = (...args: string[]) => execFileSync('/usr/bin/git', args, { cwd: work, env }).toString();
  writeTree(work, before);
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', 'a');
  for (const name of Object.keys(before)) rmSync(join(work, name.split('/')[0]!), { recursive: true, force: true });
  for (const [path, content] of Object.entries(after)) {
    const full = join(work, path);
    mkdirSync(dirname(full), { recursive: true });
    if (typeof content === 'object' && 'link' in content) symlinkSync(content.link, full);
    else if (typeof content === 'object' && 'exec' in content) {
      writeFileSync(full, content.exec);
      chmodSync(full, 0o755);
    } else writeFileSync(full, content);
  }
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', 'b');
  const raw = git('diff', '--raw', '--no-abbrev', '-z', 'HEAD~1', 'HEAD').split('\0');
  const entries: Pick<DiffEntry, 'old_path' | 'new_path' | 'a_mode' | 'b_mode' | 'new_file' | 'renamed_file' | 'deleted_file'>[] = [];
  for (let i = 0; i < raw.length - 1; ) {
    const [aMode, bMode, , , status] = raw[i]!.slice(1).split(' ');
    const renamed = status!.startsWith('R');
    const oldPath = raw[i + 1]!;
    const newPath = renamed ? raw[i + 2]! : oldPath;
    i += renamed ? 3 : 2;
    const mode = (m: string) => (m === '000000' ? '0' : m.replace(/^0/, ''));
    entries.push({ old_path: oldPath, new_path: newPath, a_mode: mode(aMode!), b_mode: mode(bMode!), new_file: status === 'A', renamed_file: renamed, deleted_file: status === 'D' });
  }
  const patch = git('diff', 'HEAD~1', 'HEAD');
  const bodies = patch
    .split(/^diff --git .*\n/m)
    .slice(1)
    .map((section) => {
      const at = section.search(/^(@@ |Binary files )/m);
      return at < 0 ? '' : section.slice(at);
    });
  return entries.map((entry, i) => ({ ...entry, diff: bodies[i] }));
}

function fileMap(files: Files) {
  const map = new Map<string, FileEntry>();
  const contents = new Map<string, Uint8Array>();
  for (const [path, content] of Object.entries(files)) {
    let mode: Mode = '100644';
    let bytes: Uint8Array;
    if (typeof content === 'object' && 'link' in content) [mode, bytes] = ['120000', Buffer.from(content.link)];
    else if (typeof content === 'object' && 'exec' in content) [mode, bytes] = ['100755', Buffer.from(content.exec)];
    else bytes = typeof content === 'string' ? Buffer.from(content) : content;
    const object = blob(bytes);
    map.set(path, { mode, sha: object.sha });
    contents.set(object.sha, bytes);
  }
  return { map, contents };
}

function ours(before: Files, after: Files): DiffEntry[] {
  const a = fileMap(before);
  const b = fileMap(after);
  const changes = treeChanges(a.map, b.map);
  const contents = new Map([...a.contents, ...b.contents]);
  for (const sha of neededBlobs(changes)) expect(contents.has(sha)).toBe(true);
  return diffEntries(changes, contents);
}

const lines = (n: number, f = (i: number) => `line ${i}`) => Array.from({ length: n }, (_, i) => `${f(i + 1)}\n`).join('');

const cases: [string, Files, Files][] = [
  ['a one-line change', { 'a.txt': 'one\ntwo\nthree\n' }, { 'a.txt': 'one\nTWO\nthree\n' }],
  ['a new file', {}, { 'new.txt': 'hello\nworld\n' }],
  ['a new empty file', { 'a.txt': 'x\n' }, { 'a.txt': 'x\n', 'empty.txt': '' }],
  ['a deleted file', { 'gone.txt': 'a\nb\nc\n', 'stay.txt': 's\n' }, { 'stay.txt': 's\n' }],
  ['a one-line file changed', { 'v': '1.9.7\n' }, { 'v': '1.9.8\n' }],
  ['no newline at the end, on either side', { 'a.txt': 'a\nb' }, { 'a.txt': 'a\nc' }],
  ['a newline added at the end', { 'a.txt': 'a\nb' }, { 'a.txt': 'a\nb\n' }],
  ['a newline taken from the end', { 'a.txt': 'a\nb\n' }, { 'a.txt': 'a\nb' }],
  ['two hunks far apart', { 'a.txt': lines(40) }, { 'a.txt': lines(40, (i) => (i === 5 || i === 30 ? `changed ${i}` : `line ${i}`)) }],
  ['two changes close enough for one hunk', { 'a.txt': lines(40) }, { 'a.txt': lines(40, (i) => (i === 10 || i === 16 ? `changed ${i}` : `line ${i}`)) }],
  ['changes 6 unchanged lines apart (one hunk)', { 'a.txt': lines(40) }, { 'a.txt': lines(40, (i) => (i === 10 || i === 17 ? `changed ${i}` : `line ${i}`)) }],
  ['changes 7 lines apart (two hunks)', { 'a.txt': lines(40) }, { 'a.txt': lines(40, (i) => (i === 10 || i === 18 ? `changed ${i}` : `line ${i}`)) }],
  ['lines inserted at the top and bottom', { 'a.txt': lines(10) }, { 'a.txt': `top\n${lines(10)}bottom\n` }],
  [
    "a function line in the hunk header (git's default funcname)",
    { 'app.rb': `class Shop\n  def price\n${lines(8, (i) => `    x${i} = ${i}`)}  end\nend\n` },
    { 'app.rb': `class Shop\n  def price\n${lines(8, (i) => `    x${i} = ${i === 7 ? 70 : i}`)}  end\nend\n` },
  ],
  ['a long function line cut at 80 bytes', { 'a.c': `int ${'x'.repeat(100)}(void)\n${lines(10, (i) => `  f(${i});`)}` }, { 'a.c': `int ${'x'.repeat(100)}(void)\n${lines(10, (i) => (i === 8 ? '  return;' : `  f(${i});`))}` }],
  ['an exact rename', { 'old/name.txt': 'same\ncontent\n', 'z.txt': 'z\n' }, { 'new/name.txt': 'same\ncontent\n', 'z.txt': 'z\n' }],
  ['a rename with a mode change', { 'run': 'echo\n' }, { 'bin/run': { exec: 'echo\n' } }],
  ['a mode-only change', { 'run.sh': 'echo hi\n' }, { 'run.sh': { exec: 'echo hi\n' } }],
  ['a mode change with content', { 'run.sh': 'echo hi\n' }, { 'run.sh': { exec: 'echo bye\n' } }],
  ['a symlink created and changed', { 'link': { link: 'a.txt' } }, { 'link': { link: 'b.txt' }, 'l2': { link: 'x' } }],
  ['a binary file created', {}, { 'img.png': Buffer.from([0x89, 0x50, 0, 1, 2, 10]) }],
  ['a binary file changed and one deleted', { 'a.bin': Buffer.from([0, 1]), 'b.bin': Buffer.from([0, 2]) }, { 'a.bin': Buffer.from([0, 3]) }],
  ['a text file turned binary', { 'a.dat': 'text\n' }, { 'a.dat': Buffer.from([0x74, 0, 0x0a]) }],
  ['unicode text', { 'u.txt': 'héllo\nwörld\n' }, { 'u.txt': 'héllo\nwörld ✓\n' }],
  ['CRLF lines', { 'w.txt': 'a\r\nb\r\nc\r\n' }, { 'w.txt': 'a\r\nB\r\nc\r\n' }],
  ['a change among identical lines (git slides the group)', { 'a.c': lines(10, () => '  ;') }, { 'a.c': lines(10, (i) => (i === 8 ? '  return;' : '  ;')) }],
  [
    'a function added after another (the indent heuristic)',
    { 'a.js': 'function a() {\n  return 1;\n}\n' },
    { 'a.js': 'function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n}\n' },
  ],
  [
    'a block added inside a nested structure',
    { 'a.rb': 'class A\n  def a\n    1\n  end\nend\n' },
    { 'a.rb': 'class A\n  def a\n    1\n  end\n\n  def b\n    2\n  end\nend\n' },
  ],
  ['a line repeated in a run of blank lines', { 'a.txt': 'a\n\n\n\nb\n' }, { 'a.txt': 'a\n\n\n\n\n\nb\n' }],
  ['lines removed from a repeated block', { 'a.py': 'x = 1\nif x:\n    y()\nif x:\n    y()\nz\n' }, { 'a.py': 'x = 1\nif x:\n    y()\nz\n' }],
  ['an emptied file', { 'a.txt': 'a\nb\n' }, { 'a.txt': '' }],
  // Lines both ends share are left out of the line diff, as xdiff's trim does.
  ['a repeated pair shortened (shared first and last lines)', { 'a.txt': 'a\nb\na\nb\n' }, { 'a.txt': 'a\nb\n' }],
  ['changes at both ends, the middle kept', { 'a.txt': `top\n${lines(20)}bottom\n` }, { 'a.txt': `TOP\n${lines(20)}BOTTOM\n` }],
  ['a line between two copies of the same block', { 'a.txt': `${lines(4)}${lines(4)}` }, { 'a.txt': `${lines(4)}middle\n${lines(4)}` }],
  ['paths in git order (a.txt, a/b, a-b, ab)', { 'x': 'x\n' }, { 'a/b': '1\n', 'a.txt': '2\n', 'a-b': '3\n', 'ab': '4\n', 'x': 'y\n' }],
  ['one source, two copies: a rename and a new file', { 'src/a.txt': 'same\n' }, { 'b/x.txt': 'same\n', 'c/a.txt': 'same\n' }],
  ['an empty file renamed', { 'e1': '' }, { 'e2': '' }],
  ['a rename among other changes', { 'docs/a.md': 'A\n', 'b.md': 'B\n', 'c.md': 'C\n' }, { 'a.md': 'A\n', 'b.md': 'B2\n', 'd.md': 'D\n' }],
];

describe('diff entries against `git diff`', () => {
  it.each(cases)('%s', (_name, before, after) => {
    expect(ours(before, after)).toEqual(gitDiff(before, after));
  });

  it('two equal trees give no entry', () => {
    expect(ours({ 'a.txt': 'a\n' }, { 'a.txt': 'a\n' })).toEqual([]);
  });
});

describe('unifiedDiff', () => {
  it('is empty for equal texts, and counts from 0 for an empty side', () => {
    expect(unifiedDiff('a\n', 'a\n')).toBe('');
    expect(unifiedDiff('', 'a\nb\n')).toBe('@@ -0,0 +1,2 @@\n+a\n+b\n');
    expect(unifiedDiff('a\n', '')).toBe('@@ -1 +0,0 @@\n-a\n');
  });
});

describe('limitDiffs (GitLab 12 collection limits)', () => {
  const entry = (diff: string): DiffEntry => ({ old_path: 'a', new_path: 'a', a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: false, deleted_file: false, diff });
  it('stops at the file past max files or max lines, and empties a patch past the size limit', () => {
    expect(limitDiffs([entry('@@\n'), entry('@@\n'), entry('@@\n')], { maxFiles: 2, maxLines: 100, maxPatchBytes: 100 })).toEqual({ diffs: [entry('@@\n'), entry('@@\n')], overflow: true });
    expect(limitDiffs([entry('1\n2\n'), entry('3\n4\n')], { maxFiles: 10, maxLines: 3, maxPatchBytes: 100 })).toEqual({ diffs: [entry('1\n2\n')], overflow: true });
    expect(limitDiffs([entry('x'.repeat(10)), entry('ok\n')], { maxFiles: 10, maxLines: 10, maxPatchBytes: 10 })).toEqual({ diffs: [entry(''), entry('ok\n')], overflow: false });
  });
});
