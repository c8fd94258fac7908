import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type RepositoryEvent, repositoryDecider } from '../../src/domain/repository/decider.js';
import { parseTag, tagObject } from '../../src/domain/repository/objects.js';
import { TAG_CHECK_MESSAGES, tagCheck, type ProtectedRef, type Pusher } from '../../src/domain/repository/push-access.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { on } = deciderSpec(repositoryDecider);
const PROJECT = 7;
const V1 = { projectId: PROJECT, ref: 'refs/tags/v1' };
const A = 'a'.repeat(40);
const T = 'f'.repeat(40);
const detail = { message: 'Add it', author_name: 'Jane', author_id: 3 };
const tagged = (tag: string, release: string | null = null): RepositoryEvent => ({
  type: 'TagCreated',
  data: { project_id: PROJECT, tag, target: T, commit_sha: A, message: 'Release', commit_details: [detail], release_description: release },
});
const create = (tag: string) => ({ type: 'CreateTag' as const, tag, target: T, commitSha: A, message: 'Release', commitDetails: [detail], releaseDescription: null });

describe('repository decider: tags', () => {
  it('creates a tag once, with a valid name, recording the tagged commit for the push activity', () => {
    on(V1).given().when(create('v1')).then([tagged('v1')]);
    on(V1).given(tagged('v1')).when(create('v1')).then(rejected('bad_request', { text: 'Tag v1 already exists' }));
    on({ projectId: PROJECT, ref: 'refs/tags/v1..2' }).given().when(create('v1..2')).then(rejected('bad_request', { text: 'Tag name invalid' }));
  });

  it('deletes a tag (its last target recorded); an unknown one is 404 No such tag', () => {
    on(V1).given(tagged('v1')).when({ type: 'DeleteTag', tag: 'v1' }).then([{ type: 'TagDeleted', data: { project_id: PROJECT, tag: 'v1', old_sha: T } }]);
    on(V1).given().when({ type: 'DeleteTag', tag: 'v1' }).then(rejected('not_found', { text: 'No such tag' }));
  });

  it("moves a tag as a deletion and a creation on its stream, in order; another ref's events are not its own", () => {
    const moved = { ...create('v1'), target: A, commitSha: A };
    on(V1)
      .given(tagged('v1'))
      .when({ type: 'UpdateRefs', commands: [{ type: 'DeleteTag', tag: 'v1' }, moved] })
      .then([
        { type: 'TagDeleted', data: { project_id: PROJECT, tag: 'v1', old_sha: T } },
        { type: 'TagCreated', data: { project_id: PROJECT, tag: 'v1', target: A, commit_sha: A, message: 'Release', commit_details: [detail], release_description: null } },
      ]);
    // The project's stream before refs had their own holds every ref's events: a fold of it keeps this ref's.
    on(V1).given(tagged('v2'), tagged('v1')).when(create('v1')).then(rejected('bad_request', { text: 'Tag v1 already exists' }));
    on(V1).given(tagged('v2')).when(create('v1')).then([tagged('v1')]);
    expect(() => repositoryDecider.decide(create('v2'), repositoryDecider.initialState(V1))).toThrow(/refs\/tags\/v2 sent to the stream of refs\/tags\/v1/);
  });

  it('gives a tag release notes once, replaces them after, and forgets them with the tag', () => {
    const saved: RepositoryEvent = { type: 'TagReleaseSaved', data: { project_id: PROJECT, tag: 'v1', description: 'Notes' } };
    on(V1).given(tagged('v1')).when({ type: 'SaveTagRelease', tag: 'v1', description: 'Notes', create: true }).then([saved]);
    on(V1).given(tagged('v1', 'Old')).when({ type: 'SaveTagRelease', tag: 'v1', description: 'Notes', create: true }).then(rejected('conflict', { text: 'Release already exists' }));
    on(V1).given(tagged('v1')).when({ type: 'SaveTagRelease', tag: 'v1', description: 'Notes', create: false }).then(rejected('not_found', { text: 'Release does not exist' }));
    on(V1).given(tagged('v1'), saved).when({ type: 'SaveTagRelease', tag: 'v1', description: 'New', create: false }).then([{ ...saved, data: { ...saved.data, description: 'New' } }]);
    on(V1)
      .given(tagged('v1', 'Old'), { type: 'TagDeleted', data: { project_id: PROJECT, tag: 'v1', old_sha: T } }, tagged('v1'))
      .when({ type: 'SaveTagRelease', tag: 'v1', description: 'x', create: false })
      .then(rejected('not_found', { text: 'Release does not exist' }));
    on({ projectId: PROJECT, ref: 'refs/tags/v9' }).given().when({ type: 'SaveTagRelease', tag: 'v9', description: 'x', create: true }).then(rejected('not_found'));
  });
});

describe('the tag check (Gitlab::Checks::TagCheck)', () => {
  const developer: Pusher = { userId: 5, isAdmin: false, role: 30, canPushCode: true, groupIds: new Set() };
  const maintainer: Pusher = { ...developer, userId: 6, role: 40 };
  const admin: Pusher = { userId: 1, isAdmin: true, role: null, canPushCode: true, groupIds: new Set() };
  const reporter: Pusher = { ...developer, userId: 7, role: 20, canPushCode: false };
  const rule = (access_level: number) => ({ kind: 'push' as const, access_level, user_id: null, group_id: null });
  const tags: ProtectedRef[] = [
    { name: 'v*', rules: [rule(40)] },
    { name: 'dev-*', rules: [rule(30)] },
    { name: 'frozen', rules: [rule(0)] },
  ];

  it('creates a protected tag by its create levels only ("No one" lets nobody in, administrators neither)', () => {
    expect(tagCheck({ kind: 'create', tag: 'v1' }, tags, developer)).toBe(TAG_CHECK_MESSAGES.createProtectedTag);
    expect(tagCheck({ kind: 'create', tag: 'v1' }, tags, maintainer)).toBeNull();
    expect(tagCheck({ kind: 'create', tag: 'v1' }, tags, admin)).toBeNull();
    expect(tagCheck({ kind: 'create', tag: 'dev-1' }, tags, developer)).toBeNull();
    expect(tagCheck({ kind: 'create', tag: 'frozen' }, tags, admin)).toBe(TAG_CHECK_MESSAGES.createProtectedTag);
    expect(tagCheck({ kind: 'create', tag: 'other' }, tags, developer)).toBeNull();
  });

  it('never moves nor deletes a protected tag; an existing tag is changed by who may admin_tag', () => {
    expect(tagCheck({ kind: 'delete', tag: 'v1' }, tags, maintainer)).toBe(TAG_CHECK_MESSAGES.deleteProtectedTag);
    expect(tagCheck({ kind: 'update', tag: 'v1' }, tags, admin)).toBe(TAG_CHECK_MESSAGES.updateProtectedTag);
    expect(tagCheck({ kind: 'delete', tag: 'other' }, tags, developer)).toBeNull();
    expect(tagCheck({ kind: 'delete', tag: 'other' }, tags, reporter)).toBe(TAG_CHECK_MESSAGES.changeExistingTags);
  });
});

describe('annotated tag objects', () => {
  it('are the bytes `git mktag` writes, and parse back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgelog-mktag-'));
    try {
      const git = (args: string[], input?: string) => execFileSync('/usr/bin/git', args, { cwd: dir, input, env: { ...process.env, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' } }).toString().trim();
      git(['init', '-q', '--bare', '.']);
      const commit = git(['commit-tree', git(['mktree'], ''), '-m', 'root']);
      const made = tagObject({ object: commit, type: 'commit', tag: 'v1.0', tagger: { name: 'Jane Doe', email: 'jane@example.com', time: 1700000000, tzOffset: 0 }, message: 'Release 1.0\n\nNotes' });
      const text = Buffer.from(made.content).toString();
      expect(git(['mktag'], `${text}\n`)).toBe(tagObject({ ...parseTag(made.content), message: 'Release 1.0\n\nNotes\n' }).sha);
      expect(git(['hash-object', '-t', 'tag', '--stdin', '--literally'], text)).toBe(made.sha);
      expect(parseTag(made.content)).toEqual({ object: commit, type: 'commit', tag: 'v1.0', tagger: { name: 'Jane Doe', email: 'jane@example.com', time: 1700000000, tzOffset: 0 }, message: 'Release 1.0\n\nNotes' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
