import { describe, expect, it } from 'vitest';
import { awardEmojiDecider, isEmojiName } from '../../src/domain/award-emoji/decider.js';
import type { AwardEmojiEvent } from '../../src/domain/award-emoji/events.js';
import type { MergeRequestEvent, VersionData } from '../../src/domain/merge-requests/events.js';
import { noteDecider, type NoteCommand } from '../../src/domain/notes/decider.js';
import { noteableKey, type NoteEvent } from '../../src/domain/notes/events.js';
import type { LoggedIssuableEvent } from '../../src/domain/issuable-history.js';
import { labelsNote, markTitleChange, mergeRequestSystemNotes, toSentence } from '../../src/domain/notes/system-notes.js';
import { noteMessage } from '../../src/domain/integrations/deliveries.js';
import { deciderSpec, rejected } from '../support/decider.js';

const MR = { noteable_type: 'MergeRequest' as const, noteable_id: 31, commit_id: null, project_id: 7, group_id: null };
const KEY = noteableKey(MR);
const D1 = '1'.repeat(40);
const D2 = '2'.repeat(40);
const AT = '2020-01-01T00:00:00.000Z';

const added = (id: number, discussion: string, type: 'DiscussionNote' | 'DiffNote' | null, resolved = false): NoteEvent => ({
  type: 'NoteAdded',
  data: { id, ...MR, author_id: 9, body: `note ${id}`, type, discussion_id: discussion, position: null, line_code: null, noteable_iid: 1, noteable_title: 'Fix', created_at: AT, resolved },
});
const add = (id: number, body: string, noteType: 'DiscussionNote' | null = null, discussionId = D1): NoteCommand => ({
  type: 'AddNote', id, noteable: MR, noteableIid: 1, noteableTitle: 'Fix', authorId: 9, body, noteType, discussionId, position: null, lineCode: null, createdAt: AT,
});
const reply = (id: number, discussionId: string): NoteCommand => ({ type: 'ReplyToDiscussion', id, noteable: MR, noteableIid: 1, noteableTitle: 'Fix', authorId: 9, body: `note ${id}`, discussionId, createdAt: AT });

describe('the notes decider', () => {
  const { on } = deciderSpec(noteDecider);

  it('adds a note, refuses a blank body as GitLab words it', () => {
    on(KEY).given().when(add(10, 'note 10')).then([added(10, D1, null)]);
    on(KEY).given().when(add(10, ' \n')).then(rejected('bad_request', { subject: `Note {:note=>["can't be blank"]}` }));
  });

  it('replies to a discussion; a reply to an individual note converts it first', () => {
    on(KEY).given(added(10, D1, 'DiscussionNote')).when(reply(20, D1)).then([added(20, D1, 'DiscussionNote')]);
    on(KEY).given(added(10, D1, null)).when(reply(20, D1)).then([{ type: 'NoteConvertedToDiscussion', data: { id: 10, ...MR } }, added(20, D1, 'DiscussionNote')]);
    on(KEY).given(added(10, D1, null)).when(reply(20, D2)).then(rejected('not_found', { subject: 'Discussion' }));
  });

  it('replies to a legacy diff note (a commit comment on a line) with one on the same line, never resolvable', () => {
    const COMMIT = { noteable_type: 'Commit' as const, noteable_id: null, commit_id: 'c'.repeat(40), project_id: 7, group_id: null };
    const legacy = (id: number): NoteEvent => ({
      type: 'NoteAdded',
      data: { id, ...COMMIT, author_id: 9, body: `note ${id}`, type: 'LegacyDiffNote', discussion_id: D1, position: null, line_code: 'ab_4_2', noteable_iid: null, noteable_title: 'Edit', created_at: AT, resolved: false },
    });
    const answer: NoteCommand = { type: 'ReplyToDiscussion', id: 20, noteable: COMMIT, noteableIid: null, noteableTitle: 'Edit', authorId: 9, body: 'note 20', discussionId: D1, createdAt: AT };
    on(noteableKey(COMMIT)).given(legacy(10)).when(answer).then([legacy(20)]);
  });

  it('replies to a resolved discussion resolved (Notes::BuildService#should_resolve)', () => {
    const resolved: NoteEvent = { type: 'NotesResolved', data: { ...MR, discussion_id: D1, note_ids: [10], by_id: 9 } };
    on(KEY).given(added(10, D1, 'DiscussionNote'), resolved).when(reply(20, D1)).then([added(20, D1, 'DiscussionNote', true)]);
  });

  it('resolves the resolvable notes not yet resolved, and nothing twice', () => {
    const resolve: NoteCommand = { type: 'ResolveDiscussion', discussionId: D1, noteable: MR, byId: 4, resolved: true };
    on(KEY).given(added(10, D1, 'DiscussionNote'), added(11, D1, 'DiscussionNote')).when(resolve).then([{ type: 'NotesResolved', data: { ...MR, discussion_id: D1, note_ids: [10, 11], by_id: 4 } }]);
    on(KEY)
      .given(added(10, D1, 'DiscussionNote'), { type: 'NotesResolved', data: { ...MR, discussion_id: D1, note_ids: [10], by_id: 4 } })
      .when(resolve)
      .then([]);
    on(KEY).given(added(10, D1, null)).when({ type: 'ResolveNote', id: 10, noteable: MR, byId: 4, resolved: true }).then(rejected('bad_request', { subject: 'Note is not resolvable' }));
  });

  it('edits and deletes only its own notes', () => {
    on(KEY).given(added(10, D1, null)).when({ type: 'EditNote', id: 10, noteable: MR, body: 'new' }).then([{ type: 'NoteEdited', data: { id: 10, ...MR, body: 'new' } }]);
    on(KEY).given().when({ type: 'DeleteNote', id: 10, noteable: MR }).then(rejected('not_found'));
    on(KEY).given(added(10, D1, null), { type: 'NoteDeleted', data: { id: 10, ...MR } }).when({ type: 'EditNote', id: 10, noteable: MR, body: 'x' }).then(rejected('not_found'));
  });
});

describe('the award emoji decider', () => {
  const { on } = deciderSpec(awardEmojiDecider);
  const awardable = { awardable_type: 'MergeRequest' as const, awardable_id: 31, project_id: 7, group_id: null };
  const awarded = (id: number, user: number, name: string): AwardEmojiEvent => ({ type: 'AwardEmojiAwarded', data: { id, ...awardable, user_id: user, name } });

  it("awards Gitlab::Emoji's names, once per user and name", () => {
    expect(['thumbsup', 'thumbsdown', '+1', 'tada', 'heart', '8ball'].every(isEmojiName)).toBe(true);
    expect(isEmojiName('not_an_emoji')).toBe(false);
    on('merge_request-31').given().when({ type: 'AwardEmoji', id: 1, awardable, userId: 2, name: 'tada' }).then([awarded(1, 2, 'tada')]);
    on('merge_request-31').given(awarded(1, 2, 'tada')).when({ type: 'AwardEmoji', id: 2, awardable, userId: 2, name: 'tada' }).then(rejected('not_found', { subject: 'Award Emoji Name has already been taken' }));
    on('merge_request-31').given(awarded(1, 2, 'tada')).when({ type: 'AwardEmoji', id: 2, awardable, userId: 3, name: 'tada' }).then([awarded(2, 3, 'tada')]);
    on('merge_request-31').given().when({ type: 'AwardEmoji', id: 1, awardable, userId: 2, name: 'nope' }).then(rejected('not_found', { subject: 'Award Emoji Name is not included in the list' }));
  });
});

// ───────────────────────────── System notes: a pure mapping ─────────────────────────────

const sha = (c: string) => c.repeat(40);
const version = (id: number, head: string, commits: string[]): VersionData => ({ version_id: id, head_commit_sha: head, base_commit_sha: sha('0'), start_commit_sha: sha('0'), commit_shas: commits, files_count: 1 });
const ofMr = { id: 31, project_id: 7, iid: 1 };
let position = 100;
const logged = (event: MergeRequestEvent, actorId: number | null = 5): LoggedIssuableEvent<MergeRequestEvent> => ({ event, position: String(position++), occurredAt: AT, actorId });
const facts = {
  username: (id: number) => `user${id}`,
  milestoneReference: (id: number) => `%${id + 100}`,
  commitTitle: (s: string) => `Title of ${s.slice(0, 2)} <x>`,
  mergeRequestPath: '/g/p/-/merge_requests/1',
};

describe('system notes from merge request events', () => {
  it('writes GitLab 12\'s notes in its order, ids 10·position + k', () => {
    position = 100;
    const stream = [
      logged({ type: 'MergeRequestOpened', data: { ...ofMr, author_id: 5, source_project_id: 7, source_branch: 'f', title: 'Fix a', description: null, target_branch: 'master', assignee_ids: [], milestone_id: 3, label_ids: [12], discussion_locked: null, squash: false, force_remove_source_branch: false, allow_collaboration: false, version: version(1, sha('a'), [sha('a')]) } }),
      logged({ type: 'MergeRequestUpdated', data: { ...ofMr, changes: { title: 'WIP: Fix b', label_ids: [12, 14, 13], assignee_ids: [8, 9, 10], target_branch: 'stable', milestone_id: null, discussion_locked: false }, previous: { title: 'Fix a', assignee_ids: [] } } }),
      logged({ type: 'MergeRequestVersionRecorded', data: { ...ofMr, version: version(2, sha('b'), [sha('b'), sha('a')]) } }),
      logged({ type: 'MergeRequestVersionRecorded', data: { ...ofMr, version: version(3, sha('c'), [sha('d'), sha('c'), sha('b'), sha('a')]) } }),
      logged({ type: 'MergeRequestTimeEstimateChanged', data: { ...ofMr, time_estimate: 0 } }),
      logged({ type: 'MergeRequestTimeSpent', data: { ...ofMr, user_id: 5, time_spent: 5400, reset: false } }),
      logged({ type: 'MergeRequestClosed', data: { ...ofMr, title: 'x', by_id: 5 } }),
      logged({ type: 'MergeRequestMergeStatusChecked', data: { ...ofMr, merge_status: 'can_be_merged', source_sha: sha('c'), target_sha: sha('0') } }),
    ];
    const notes = mergeRequestSystemNotes(stream, facts);
    expect(notes.map((n) => [n.id, n.body])).toEqual([
      [1000, 'changed milestone to %103'],
      [1001, 'added ~12 label'],
      [1010, 'marked as a **Work In Progress**'],
      [1011, 'changed title from **Fix {-a-}** to **{+WIP: +}Fix {+b+}**'],
      [1012, 'unlocked this merge request'],
      [1013, 'removed milestone'],
      [1014, 'added ~13 ~14 labels'],
      [1015, 'changed target branch from `master` to `stable`'],
      [1016, 'assigned to @user8, @user9, and @user10'],
      // The version taken for the new target branch is no push.
      [1030, `added 2 commits\n\n<ul><li>dddddddd - Title of dd &lt;x&gt;</li><li>cccccccc - Title of cc &lt;x&gt;</li></ul>\n\n[Compare with previous version](/g/p/-/merge_requests/1/diffs?diff_id=3&start_sha=${sha('b')})`],
      [1040, 'removed time estimate'],
      [1050, 'added 1h 30m of time spent'],
      [1060, 'closed'],
    ]);
    expect(notes.every((n) => n.authorId === 5 && n.createdAt === AT)).toBe(true);
    // The mapping is pure: the same stream gives the same notes.
    expect(mergeRequestSystemNotes(stream, facts)).toEqual(notes);
  });

  it('words labels, sentences and title changes as Rails and GitLab do', () => {
    expect(labelsNote([1, 2], [2, 3])).toBe('added ~3 and removed ~1 labels');
    expect(labelsNote([1], [])).toBe('removed ~1 label');
    expect(labelsNote([1], [1])).toBeNull();
    expect(toSentence(['@a'])).toBe('@a');
    expect(toSentence(['@a', '@b'])).toBe('@a and @b');
    expect(markTitleChange('Add a', 'Add b')).toEqual(['Add {-a-}', 'Add {+b+}']);
    expect(markTitleChange('same', 'same')).toEqual(['same', 'same']);
  });
});

describe('a note to chat integrations (ChatMessage::NoteMessage)', () => {
  const facts = {
    project: { id: 7, name: 'p', pathWithNamespace: 'g/p', webUrl: 'https://x/g/p' },
    user: { name: 'Jane Doe', username: 'jane', avatarUrl: 'https://x/a.png' },
  };
  it('says who commented on which merge request or commit, the note as its attachment', () => {
    const note = { id: 500, body: 'Looks good', noteable_type: 'MergeRequest', noteable_iid: 3, commit_id: null, noteable_title: 'Fix it\nmore' };
    expect(noteMessage(note, facts)).toEqual({
      projectName: 'g/p',
      userName: 'jane',
      userAvatar: 'https://x/a.png',
      summary: 'Jane Doe (jane) [commented on merge request !3](https://x/g/p/-/merge_requests/3#note_500) in [g/p](https://x/g/p): *Fix it*',
      details: { text: 'Looks good', color: '#345' },
      activity: { title: 'Jane Doe (jane) [commented on merge request !3](https://x/g/p/-/merge_requests/3#note_500)', subtitle: 'in [g/p](https://x/g/p)', text: 'Fix it', image: 'https://x/a.png' },
    });
    const onCommit = noteMessage({ ...note, noteable_type: 'Commit', noteable_iid: null, commit_id: 'a'.repeat(40), noteable_title: 'Add a\n\nbody' }, facts);
    expect(onCommit?.summary).toBe(`Jane Doe (jane) [commented on commit aaaaaaaa](https://x/g/p/-/commit/${'a'.repeat(40)}#note_500) in [g/p](https://x/g/p): *Add a*`);
    expect(noteMessage({ ...note, noteable_type: 'Epic' }, facts)).toBeNull();
  });
});
