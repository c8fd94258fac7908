import { describe, expect, it } from 'vitest';
import { blob, commit, gitObject, MODES, tagObject, tree } from '../../src/domain/repository/objects.js';
import { FLUSH, pktLine, PktLineReader, type Packet } from '../../src/domain/repository/pkt-line.js';
import { branchCheck, BRANCH_CHECK_MESSAGES, type ProtectedRef, type Pusher } from '../../src/domain/repository/push-access.js';
import { advertiseReceivePack, classify, FsckError, objectLinks, parseCommands, ReceivePackError, reportStatus, walkPushed, ZERO_SHA } from '../../src/domain/repository/receive.js';

/** git-receive-pack's pure parts: the command list, which ref write each command is, the objects' sanity and connectivity, the answer. */

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const data = (text: string): Packet => ({ type: 'data', data: Buffer.from(text) });
const flush: Packet = { type: 'flush' };

function texts(bytes: Buffer): string[] {
  const reader = new PktLineReader();
  const out = [...reader.push(bytes)].map((p) => (p.type === 'data' ? p.data.toString('latin1') : p.type));
  reader.end();
  return out;
}

describe('parseCommands', () => {
  it('reads the commands up to the flush, the capabilities after the first one’s NUL', () => {
    expect(parseCommands([data(`${ZERO_SHA} ${A} refs/heads/master\0report-status side-band-64k agent=git/2.39\n`), data(`${A} ${ZERO_SHA} refs/tags/v1\n`), flush, data('ignored')])).toEqual({
      commands: [
        { oldSha: ZERO_SHA, newSha: A, ref: 'refs/heads/master' },
        { oldSha: A, newSha: ZERO_SHA, ref: 'refs/tags/v1' },
      ],
      capabilities: new Set(['report-status', 'side-band-64k', 'agent=git/2.39']),
      pushOptions: [],
    });
  });

  it('reads the push options up to a second flush when the client asks for push-options', () => {
    expect(parseCommands([data(`${ZERO_SHA} ${A} refs/heads/topic\0report-status push-options\n`), flush, data('merge_request.create\n'), data('merge_request.target=main\n'), flush])).toMatchObject({
      commands: [{ ref: 'refs/heads/topic' }],
      pushOptions: ['merge_request.create', 'merge_request.target=main'],
    });
  });

  it('refuses what is not a command, and a shallow client', () => {
    expect(() => parseCommands([data('want x\n'), flush])).toThrow(new ReceivePackError("protocol error: expected old/new/ref, got 'want x'"));
    expect(() => parseCommands([data(`shallow ${A}\n`), flush])).toThrow(new ReceivePackError('shallow update not allowed'));
  });
});

describe('classify', () => {
  it.each([
    [ZERO_SHA, A, 'refs/heads/feature/x', { kind: 'branch', action: 'create', name: 'feature/x' }],
    [A, B, 'refs/heads/master', { kind: 'branch', action: 'update', name: 'master' }],
    [A, ZERO_SHA, 'refs/heads/master', { kind: 'branch', action: 'delete', name: 'master' }],
    [ZERO_SHA, A, 'refs/tags/v1.0', { kind: 'tag', action: 'create', name: 'v1.0' }],
    [A, B, 'refs/tags/v1.0', { kind: 'tag', action: 'update', name: 'v1.0' }],
    [ZERO_SHA, A, 'refs/merge-requests/1/head', { kind: 'refused', reason: 'deny updating a hidden ref' }],
    [ZERO_SHA, A, 'refs/notes/commits', { kind: 'refused', reason: 'only branches (refs/heads/*) and tags (refs/tags/*) can be pushed' }],
    [ZERO_SHA, A, 'refs/heads/bad..name', { kind: 'refused', reason: 'funny refname' }],
    [ZERO_SHA, A, 'HEAD', { kind: 'refused', reason: 'funny refname' }],
  ])('%s %s %s', (oldSha, newSha, ref, expected) => {
    expect(classify({ oldSha, newSha, ref })).toMatchObject({ ref, ...expected });
  });
});

describe('objectLinks (index-pack --strict)', () => {
  const file = blob('x\n');
  const root = tree([{ mode: MODES.file, name: 'a', sha: file.sha }, { mode: MODES.tree, name: 'd', sha: B }]);
  const who = { name: 'Ada', email: 'ada@example.com', time: 1, tzOffset: 0 };

  it('gives what a commit, a tree and a tag point to, with the type each must have', () => {
    const made = commit({ tree: root.sha, parents: [A], author: who, committer: who, message: 'm' });
    expect(objectLinks(made)).toEqual([
      { sha: root.sha, type: 'tree' },
      { sha: A, type: 'commit' },
    ]);
    expect(objectLinks(root)).toEqual([
      { sha: file.sha, type: 'blob' },
      { sha: B, type: 'tree' },
    ]);
    expect(objectLinks(tagObject({ object: made.sha, type: 'commit', tag: 'v1', tagger: who, message: 'm' }))).toEqual([{ sha: made.sha, type: 'commit' }]);
    expect(objectLinks(file)).toEqual([]);
    // A gitlink (a submodule's commit) is not followed.
    expect(objectLinks(gitObject('tree', Buffer.concat([Buffer.from('160000 sub\0'), Buffer.from(A, 'hex')])))).toEqual([]);
  });

  it.each([
    ['commit', 'parent x\n', 'missingTree'],
    ['commit', `tree ${A}\nauthor nobody\ncommitter A <a> 1 +0000\n\nm`, 'badIdent'],
    ['commit', `tree ${A}\nauthor A <a> 1 +0000\n\nm`, 'missingCommitter'],
    ['tree', '100644 a\0short', 'badTree'],
    ['tree', `100664 a\0${'x'.repeat(20)}`, 'badFilemode'],
    ['tree', `100644 b\0${'x'.repeat(20)}100644 a\0${'x'.repeat(20)}`, 'treeNotSorted'],
    ['tree', `100644 a\0${'x'.repeat(20)}100644 a\0${'x'.repeat(20)}`, 'duplicateEntries'],
    ['tree', `40000 .git\0${'x'.repeat(20)}`, 'hasDotgit'],
    ['tree', `100644 a/b\0${'x'.repeat(20)}`, 'fullPathname'],
    ['tag', `object ${A}\ntype car\ntag v\n\nm`, 'badType'],
  ] as const)('refuses a %s like %j (%s)', (type, content, id) => {
    const object = gitObject(type, Buffer.from(content, 'latin1'));
    expect(() => objectLinks(object)).toThrow(FsckError);
    expect(() => objectLinks(object)).toThrow(`object ${object.sha}: ${id}: `);
  });
});

describe('walkPushed', () => {
  const who = { name: 'Ada', email: 'ada@example.com', time: 1, tzOffset: 0 };
  const file = blob('x\n');
  const root = tree([{ mode: MODES.file, name: 'a', sha: file.sha }]);
  const made = commit({ tree: root.sha, parents: [A], author: who, committer: who, message: 'm' });
  const stray = blob('not reachable');
  const pushed = new Map([made, root, file, stray].map((o) => [o.sha, o]));

  it('walks the pushed objects from the tips: what they reach, and what they point to outside the pack', () => {
    const walked = walkPushed([made.sha], pushed, objectLinks);
    expect([...walked.reachable].sort()).toEqual([made.sha, root.sha, file.sha].sort());
    expect([...walked.outside]).toEqual([[A, 'commit']]);
    // A tip the pack lacks must be in the repository (any type).
    expect([...walkPushed([B], pushed, objectLinks).outside]).toEqual([[B, null]]);
  });

  it('refuses a link to a pushed object of the wrong type', () => {
    const wrong = commit({ tree: file.sha, parents: [], author: who, committer: who, message: 'm' });
    expect(() => walkPushed([wrong.sha], new Map([[wrong.sha, wrong], [file.sha, file]]), objectLinks)).toThrow(`object ${wrong.sha}: badObjectType: points to ${file.sha}, a blob, where a tree must be`);
  });
});

describe('the answers', () => {
  it('advertises the refs, or capabilities^{} for an empty repository', () => {
    const caps = 'report-status delete-refs side-band-64k quiet atomic ofs-delta push-options object-format=sha1 agent=forgelog/x';
    expect(texts(advertiseReceivePack([], 'forgelog/x'))).toEqual([`${ZERO_SHA} capabilities^{}\0${caps}\n`, 'flush']);
    expect(texts(advertiseReceivePack([{ name: 'refs/heads/master', sha: A }, { name: 'refs/tags/v1', sha: B }], 'forgelog/x'))).toEqual([
      `${A} refs/heads/master\0${caps}\n`,
      `${B} refs/tags/v1\n`,
      'flush',
    ]);
  });

  it('reports the status plainly, or with the messages on band 2 and the report inside band 1', () => {
    const report = { unpack: null, refs: [{ ref: 'refs/heads/a', error: null }, { ref: 'refs/heads/b', error: 'pre-receive hook\ndeclined' }], messages: ['GitLab: no\n'] };
    const plain = Buffer.concat([pktLine('unpack ok\n'), pktLine('ok refs/heads/a\n'), pktLine('ng refs/heads/b pre-receive hook declined\n'), FLUSH]);
    expect(reportStatus(report, false)).toEqual(plain);
    const banded = texts(reportStatus(report, true));
    expect(banded).toEqual(['\u0002GitLab: no\n', `\u0001${plain.toString('latin1')}`, 'flush']);
    expect(texts(reportStatus({ unpack: 'pack checksum mismatch', refs: [{ ref: 'refs/heads/a', error: 'unpacker error' }], messages: [] }, false))).toEqual([
      'unpack pack checksum mismatch\n',
      'ng refs/heads/a unpacker error\n',
      'flush',
    ]);
  });
});

describe('branchCheck: force pushes', () => {
  const refs: ProtectedRef[] = [{ name: 'master', rules: [{ kind: 'push', access_level: 30, user_id: null, group_id: null }] }];
  const repository = { empty: false, fullPath: 'g/p', membersUrl: 'http://x/g/p/-/project_members' };
  const maintainer: Pusher = { userId: 1, isAdmin: false, role: 40, canPushCode: true, groupIds: new Set() };
  const admin: Pusher = { ...maintainer, isAdmin: true, role: null };

  it('refuses a force push to a protected branch, whoever pushes (GitLab 12 has no allow_force_push)', () => {
    for (const who of [maintainer, admin]) {
      expect(branchCheck({ kind: 'push', branch: 'master', mergeRequest: false, force: true }, refs, who, repository)).toBe(BRANCH_CHECK_MESSAGES.forcePushProtectedBranch);
      expect(branchCheck({ kind: 'push', branch: 'master', mergeRequest: false, force: false }, refs, who, repository)).toBeNull();
    }
    expect(BRANCH_CHECK_MESSAGES.forcePushProtectedBranch).toBe('You are not allowed to force push code to a protected branch on this project.');
  });

  it('lets a force push to an unprotected branch through', () => {
    expect(branchCheck({ kind: 'push', branch: 'topic', mergeRequest: false, force: true }, refs, maintainer, repository)).toBeNull();
  });
});
