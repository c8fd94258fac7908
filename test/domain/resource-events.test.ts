import { describe, expect, it } from 'vitest';
import type { IssueEvent } from '../../src/domain/issues/events.js';
import type { MergeRequestEvent } from '../../src/domain/merge-requests/events.js';
import type { LoggedIssuableEvent } from '../../src/domain/issuable-history.js';
import { issueSystemNotes } from '../../src/domain/notes/issue-system-notes.js';
import { resourceEvents } from '../../src/domain/resource-events.js';

const ofIssue = { id: 7, project_id: 1, iid: 3 };
const opened: IssueEvent = {
  type: 'IssueOpened',
  data: { ...ofIssue, author_id: 5, title: 't', description: null, assignee_ids: [], milestone_id: 20, label_ids: [2, 1], due_date: null, confidential: false, discussion_locked: null, weight: null, created_at: null, moved_from_id: null },
};
const updated = (changes: Extract<IssueEvent, { type: 'IssueUpdated' }>['data']['changes']): IssueEvent => ({ type: 'IssueUpdated', data: { ...ofIssue, changes, previous: {}, updated_at: null } });

let position = 100;
const logged = (event: IssueEvent | MergeRequestEvent, actorId: number | null = 9): LoggedIssuableEvent => ({ event, position: String((position += 1)), occurredAt: `2026-01-01T00:00:0${position % 10}.000Z`, actorId });

describe('resourceEvents', () => {
  it('maps labels added and removed, milestones and states, ids 1000·p + k', () => {
    position = 100;
    const stream = [
      logged(opened, null),
      logged(updated({ label_ids: [1, 3], milestone_id: 21 })),
      logged(updated({ title: 'no record' })),
      logged({ type: 'IssueClosed', data: { ...ofIssue, title: 't', by_id: 9 } }),
      logged(updated({ milestone_id: null })),
      logged({ type: 'IssueReopened', data: { ...ofIssue, title: 't' } }),
    ];
    expect(resourceEvents(stream).map(({ createdAt: _, ...r }) => r)).toEqual([
      { kind: 'label', labelId: 1, action: 'add', id: 101_000, userId: 5 },
      { kind: 'label', labelId: 2, action: 'add', id: 101_001, userId: 5 },
      { kind: 'milestone', milestoneId: 20, action: 'add', state: 'opened', id: 101_002, userId: 5 },
      { kind: 'label', labelId: 3, action: 'add', id: 102_000, userId: 9 },
      { kind: 'label', labelId: 2, action: 'remove', id: 102_001, userId: 9 },
      { kind: 'milestone', milestoneId: 21, action: 'add', state: 'opened', id: 102_002, userId: 9 },
      { kind: 'state', state: 'closed', id: 104_000, userId: 9 },
      // ChangeMilestoneService: a removal names the old milestone, with the issuable's state then.
      { kind: 'milestone', milestoneId: 21, action: 'remove', state: 'closed', id: 105_000, userId: 9 },
      { kind: 'state', state: 'reopened', id: 106_000, userId: 9 },
    ]);
  });

  it('is the same for the same log (stable ids across a replay)', () => {
    position = 200;
    const stream = [logged(opened), logged(updated({ label_ids: [] }))];
    expect(resourceEvents(stream)).toEqual(resourceEvents(stream.map((e) => ({ ...e }))));
    expect(resourceEvents(stream).filter((r) => r.kind === 'label').map((r) => r.id)).toEqual([201_000, 201_001, 202_000, 202_001]);
  });

  it('maps a merge request merged', () => {
    position = 300;
    const mr = { id: 8, project_id: 1, iid: 2 };
    const stream = [logged({ type: 'MergeRequestMerged', data: { ...mr, title: 't', by_id: 4, merge_commit_sha: 'a'.repeat(40), squash_commit_sha: null } } as MergeRequestEvent, 4)];
    expect(resourceEvents(stream)).toEqual([{ kind: 'state', state: 'merged', id: 301_000, createdAt: expect.any(String), userId: 4 }]);
  });
});

describe('the one walk of an issuable stream (src/domain/issuable-history.ts)', () => {
  it('numbers system notes 10·p + k and resource events 1000·p + k from the same events, by the same users', () => {
    position = 400;
    const stream = [
      logged(opened, null),
      logged(updated({ label_ids: [1], milestone_id: null })),
      logged({ type: 'IssueClosed', data: { ...ofIssue, title: 't', by_id: 9 } }),
    ];
    const facts = { username: () => 'u', milestoneReference: (id: number) => `%${id}`, issueReference: (id: number) => `#${id}`, epicReference: () => null, commitReference: (_: number, sha: string) => sha };
    const notes = issueSystemNotes(stream as LoggedIssuableEvent<IssueEvent>[], facts);
    expect(notes.map(({ id, authorId, body }) => [id, authorId, body])).toEqual([
      [4010, 5, 'changed milestone to %20'],
      [4011, 5, 'added ~1 ~2 labels'],
      [4020, 9, 'removed milestone'],
      [4021, 9, 'removed ~2 label'],
      [4030, 9, 'closed'],
    ]);
    expect(resourceEvents(stream).map(({ id, userId, kind }) => [id, userId, kind])).toEqual([
      [401_000, 5, 'label'],
      [401_001, 5, 'label'],
      [401_002, 5, 'milestone'],
      [402_000, 9, 'label'],
      [402_001, 9, 'milestone'],
      [403_000, 9, 'state'],
    ]);
  });
});
