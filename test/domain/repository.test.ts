import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type RepositoryEvent, repositoryDecider, validBranchName } from '../../src/domain/repository/decider.js';
import { applyActions, buildTrees, type FileEntry } from '../../src/domain/repository/files.js';
import { blob, MODES, tree } from '../../src/domain/repository/objects.js';
import { BRANCH_CHECK_MESSAGES, branchCheck, canAccessBranch, developersCan, protectedRefMatches, type ProtectedRef, type Pusher } from '../../src/domain/repository/push-access.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { on } = deciderSpec(repositoryDecider);
const PROJECT = 7;
const ref = (branch: string) => ({ projectId: PROJECT, ref: `refs/heads/${branch}` });
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const D = (message: string) => ({ message, author_name: 'Jane', author_id: 5 });
const created = (branch: string, sha: string): RepositoryEvent => ({
  type: 'BranchCreated',
  data: { project_id: PROJECT, branch, new_sha: sha, commits: [sha], commit_details: [D('first')], commit_count: 1 },
});

describe('repository decider', () => {
  it('creates a branch once, with a valid name', () => {
    on(ref("master")).given().when({ type: 'CreateBranch', branch: 'master', sha: A, commits: [A], commitDetails: [D('first')] }).then([created('master', A)]);
    on(ref("master")).given(created('master', A)).when({ type: 'CreateBranch', branch: 'master', sha: B, commits: [], commitDetails: [] }).then(rejected('bad_request', { text: 'Branch already exists' }));
    on(ref("a..b")).given().when({ type: 'CreateBranch', branch: 'a..b', sha: A, commits: [], commitDetails: [] }).then(rejected('bad_request', { text: 'Branch name is invalid' }));
  });

  it('moves a branch from the head the push was built on, old and new SHA in the event', () => {
    on(ref("master"))
      .given(created('master', A))
      .when({ type: 'PushBranch', branch: 'master', oldSha: A, newSha: B, commits: [B], commitDetails: [D('second\n\nbody')] })
      .then([{ type: 'BranchUpdated', data: { project_id: PROJECT, branch: 'master', old_sha: A, new_sha: B, commits: [B], commit_details: [D('second\n\nbody')], commit_count: 1 } }]);
    on(ref("master"))
      .given(created('master', A), { type: 'BranchUpdated', data: { project_id: PROJECT, branch: 'master', old_sha: A, new_sha: B, commits: [B], commit_details: [D('second')], commit_count: 1 } })
      .when({ type: 'PushBranch', branch: 'master', oldSha: A, newSha: C, commits: [C], commitDetails: [D('third')] })
      .then(rejected('conflict'));
  });

  it('deletes an existing branch, recording its last head', () => {
    on(ref("topic")).given(created('topic', A)).when({ type: 'DeleteBranch', branch: 'topic' }).then([{ type: 'BranchDeleted', data: { project_id: PROJECT, branch: 'topic', old_sha: A } }]);
    on(ref("topic")).given().when({ type: 'DeleteBranch', branch: 'topic' }).then(rejected('bad_request', { text: 'No such branch' }));
  });

  it.each([
    ['master', true],
    ['feature/one', true],
    ['release-1.0', true],
    ['refs/heads/master', false],
    ['-dash', false],
    ['a b', false],
    ['a~1', false],
    ['a:b', false],
    ['.hidden', false],
    ['x.lock', false],
    ['trailing/', false],
    ['x@{1}', false],
    ['@', false],
  ])('branch name %j valid: %s', (name, valid) => expect(validBranchName(name)).toBe(valid));
});

describe('file actions', () => {
  const files = (entries: Record<string, string>): Map<string, FileEntry> =>
    new Map(Object.entries(entries).map(([path, content]) => [path, { mode: MODES.file, sha: blob(content).sha }]));
  const bytes = (s: string) => new TextEncoder().encode(s);

  it('creates, updates, moves (with or without new content), chmods and deletes', () => {
    const { files: after, blobs } = applyActions(files({ 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' }), [
      { action: 'create', filePath: 'dir/new.txt', content: bytes('new') },
      { action: 'update', filePath: 'a.txt', content: bytes('A') },
      { action: 'move', filePath: 'moved.txt', previousPath: 'b.txt' },
      { action: 'chmod', filePath: 'c.txt', executeFilemode: true },
      { action: 'delete', filePath: 'moved.txt' },
    ]);
    expect(Object.fromEntries(after)).toEqual({
      'a.txt': { mode: MODES.file, sha: blob('A').sha },
      'c.txt': { mode: MODES.executable, sha: blob('c').sha },
      'dir/new.txt': { mode: MODES.file, sha: blob('new').sha },
    });
    expect(blobs.map((b) => b.sha)).toEqual([blob('new').sha, blob('A').sha]);
  });

  it('builds the nested trees git would write', () => {
    const { root, trees } = buildTrees(files({ 'README.md': 'r', 'src/a.js': 'a', 'src/lib/b.js': 'b' }));
    const lib = tree([{ mode: MODES.file, name: 'b.js', sha: blob('b').sha }]);
    const src = tree([
      { mode: MODES.file, name: 'a.js', sha: blob('a').sha },
      { mode: MODES.tree, name: 'lib', sha: lib.sha },
    ]);
    const top = tree([
      { mode: MODES.file, name: 'README.md', sha: blob('r').sha },
      { mode: MODES.tree, name: 'src', sha: src.sha },
    ]);
    expect(root).toBe(top.sha);
    expect(trees.map((t) => t.sha).sort()).toEqual([lib.sha, src.sha, top.sha].sort());
  });

  it("refuses with Files::MultiService's messages", () => {
    const base = files({ 'a.txt': 'a' });
    expect(() => applyActions(new Map(), [{ action: 'delete', filePath: 'a.txt' }])).toThrow('No files to delete.');
    expect(() => applyActions(base, [{ action: 'create', filePath: 'a.txt' }])).toThrow('Your changes could not be committed because a file with the name `a.txt` already exists.');
    expect(() => applyActions(base, [{ action: 'update', filePath: 'x' }])).toThrow('File to be updated `x` does not exist.');
    expect(() => applyActions(base, [{ action: 'move', filePath: 'x' }])).toThrow('You must supply the original file path when moving file `x`.');
    expect(() => applyActions(base, [{ action: 'create', filePath: '' }])).toThrow('You must specify a file_path.');
    expect(() => applyActions(base, [{ action: 'create', filePath: 'a/../../x' }])).toThrow('cannot include directory traversal');
    expect(() => applyActions(base, [{ action: 'create', filePath: 'we<ird' }])).toThrow("can contain only letters, digits, '_', '-', '@' and '.'.");
    expect(() => buildTrees(applyActions(base, [{ action: 'create', filePath: 'a.txt/inner' }]).files)).toThrow();
  });
});

describe('push access', () => {
  const dev: Pusher = { userId: 5, isAdmin: false, role: 30, canPushCode: true, groupIds: new Set() };
  const maintainer: Pusher = { ...dev, userId: 6, role: 40 };
  const refs: ProtectedRef[] = [
    { name: 'master', rules: [{ kind: 'push', access_level: 40, user_id: null, group_id: null }, { kind: 'merge', access_level: 30, user_id: null, group_id: null }] },
    { name: 'release/*', rules: [{ kind: 'push', access_level: 30, user_id: null, group_id: null }] },
    { name: 'frozen', rules: [{ kind: 'push', access_level: 0, user_id: null, group_id: null }, { kind: 'push', access_level: 40, user_id: 5, group_id: null }] },
  ];

  it('matches wildcards as ProtectedRefMatcher does', () => {
    expect(protectedRefMatches('release/*', 'release/1.0')).toBe(true);
    expect(protectedRefMatches('release/*', 'release')).toBe(false);
    expect(protectedRefMatches('*-stable', 'v1/x-stable')).toBe(true);
    expect(protectedRefMatches('a.b', 'axb')).toBe(false);
    expect(protectedRefMatches('*', '')).toBe(true);
    expect(protectedRefMatches('a**b', 'ab')).toBe(true);
    expect(protectedRefMatches('*aba*', 'xabax')).toBe(true);
    expect(protectedRefMatches('ab*ba', 'aba')).toBe(false);
    expect(protectedRefMatches('*a*b*a*', 'bab')).toBe(false);
    expect(protectedRefMatches(`${'*a'.repeat(30)}*b`, 'a'.repeat(5000))).toBe(false);
  });

  it('matches exactly as the regular expression GitLab compiles (a lazy .*? per star), without one', () => {
    const letters = fc.constantFrom('a', 'b', '/', '.', '*');
    const reference = (pattern: string, branch: string) =>
      new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*?')}$`).test(branch);
    fc.assert(
      fc.property(fc.string({ unit: letters, maxLength: 8 }), fc.string({ unit: letters, maxLength: 10 }), (pattern, branch) => {
        const name = branch.replaceAll('*', '');
        expect(protectedRefMatches(pattern, name)).toBe(pattern.includes('*') ? reference(pattern, name) : pattern === name);
      }),
      { numRuns: 2000 },
    );
  });

  it("refuses writes as Gitlab::Checks::BranchCheck does, in GitLab's words", () => {
    const repository = { empty: false, fullPath: 'g/p', membersUrl: 'http://x/g/p/-/project_members' };
    const create = (branch: string, fromProtectedBranch = false) => ({ kind: 'create' as const, branch, fromProtectedBranch });
    expect(branchCheck(create('topic'), refs, dev, repository)).toBeNull();
    expect(branchCheck(create('release/3'), refs, dev, repository)).toBeNull();
    // master: developers merge but do not push; creating it needs a protected branch's commit.
    expect(branchCheck(create('master'), refs, dev, repository)).toBe(BRANCH_CHECK_MESSAGES.invalidCommitCreateProtectedBranch);
    expect(branchCheck(create('master', true), refs, dev, repository)).toBeNull();
    expect(branchCheck(create('master'), refs, { ...dev, role: 20, canPushCode: false }, repository)).toBe(BRANCH_CHECK_MESSAGES.createProtectedBranch);
    expect(branchCheck({ kind: 'push', branch: 'master', mergeRequest: false }, refs, dev, repository)).toBe(BRANCH_CHECK_MESSAGES.pushProtectedBranch);
    expect(branchCheck({ kind: 'push', branch: 'master', mergeRequest: true }, refs, dev, repository)).toBeNull();
    expect(branchCheck({ kind: 'push', branch: 'frozen', mergeRequest: true }, refs, maintainer, repository)).toBe(BRANCH_CHECK_MESSAGES.mergeProtectedBranch);
    expect(branchCheck(create('master'), refs, dev, { ...repository, empty: true })).toBe(
      '\nA default branch (e.g. master) does not yet exist for g/p\nAsk a project Owner or Maintainer to create a default branch:\n\n  http://x/g/p/-/project_members\n\n',
    );
    expect(branchCheck({ kind: 'delete', branch: 'release/1', isDefault: false }, refs, dev, repository)).toBe(BRANCH_CHECK_MESSAGES.deleteProtectedBranch);
    expect(branchCheck({ kind: 'delete', branch: 'release/1', isDefault: false }, refs, maintainer, repository)).toBeNull();
    expect(branchCheck({ kind: 'delete', branch: 'topic', isDefault: true }, refs, maintainer, repository)).toBe(BRANCH_CHECK_MESSAGES.deleteDefaultBranch);
  });

  it('lets push_code decide on an unprotected branch, the rules on a protected one', () => {
    expect(canAccessBranch('push', 'topic', refs, dev)).toBe(true);
    expect(canAccessBranch('push', 'topic', refs, { ...dev, canPushCode: false })).toBe(false);
    expect(canAccessBranch('push', 'master', refs, dev)).toBe(false);
    expect(canAccessBranch('push', 'master', refs, maintainer)).toBe(true);
    expect(canAccessBranch('merge', 'master', refs, dev)).toBe(true);
    expect(canAccessBranch('push', 'release/2', refs, dev)).toBe(true);
    // "No one", except the user a rule names.
    expect(canAccessBranch('push', 'frozen', refs, maintainer)).toBe(false);
    expect(canAccessBranch('push', 'frozen', refs, dev)).toBe(true);
    expect(canAccessBranch('push', 'master', refs, { ...dev, isAdmin: true, role: null })).toBe(true);
    expect(developersCan('push', 'release/2', refs)).toBe(true);
    expect(developersCan('push', 'master', refs)).toBe(false);
    expect(developersCan('merge', 'master', refs)).toBe(true);
  });
});
