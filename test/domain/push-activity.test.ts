import { describe, expect, it } from 'vitest';
import { activityRecord, activityTypes, pushCommitTitle } from '../../src/domain/feeds/activity.js';
import { repositoryEvents } from '../../src/domain/repository/decider.js';
import { upcast } from '../../src/eventstore/upcasters.js';
import { installEventTypes } from '../../src/commands/kernel/aggregates.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const detail = (message: string) => ({ message, author_name: 'Jane Doe' });

describe('push activity (PushEvent, PushEventPayloadService)', () => {
  it('records a new branch as "pushed new": no commit_from, the head commit title', () => {
    expect(activityRecord('BranchCreated', { project_id: 7, branch: 'topic', new_sha: B, commits: [B], commit_details: [detail('Add the README\n\nWith a body')] })).toEqual({
      action_name: 'pushed new',
      target_id: null,
      target_iid: null,
      target_type: null,
      target_title: null,
      push_data: { commit_count: 1, action: 'created', ref_type: 'branch', commit_from: null, commit_to: B, ref: 'topic', commit_title: 'Add the README', ref_count: null },
    });
  });

  it('records a branch made at a commit it did not bring with no commits and no title', () => {
    expect(activityRecord('BranchCreated', { project_id: 7, branch: 'topic', new_sha: B, commits: [], commit_details: [] }).push_data).toEqual({
      commit_count: 0, action: 'created', ref_type: 'branch', commit_from: null, commit_to: B, ref: 'topic', commit_title: null, ref_count: null,
    });
  });

  it('records a move as "pushed to" with both SHAs, the count and the newest commit title', () => {
    const record = activityRecord('BranchUpdated', {
      project_id: 7, branch: 'master', old_sha: A, new_sha: C, commits: [C, B], commit_details: [detail('Newest'), detail('Older')],
    });
    expect(record.action_name).toBe('pushed to');
    expect(record.push_data).toEqual({ commit_count: 2, action: 'pushed', ref_type: 'branch', commit_from: A, commit_to: C, ref: 'master', commit_title: 'Newest', ref_count: null });
  });

  it('records a deletion as "deleted": commit_from the old head, nothing after it', () => {
    expect(activityRecord('BranchDeleted', { project_id: 7, branch: 'topic', old_sha: A })).toMatchObject({
      action_name: 'deleted',
      target_type: null,
      push_data: { commit_count: 0, action: 'removed', ref_type: 'branch', commit_from: A, commit_to: null, ref: 'topic', commit_title: null, ref_count: null },
    });
  });

  it('answers the "pushed" action filter with the branch and tag events, and no target filter', () => {
    expect(activityTypes({ action: 'pushed' }).sort()).toEqual(['BranchCreated', 'BranchDeleted', 'BranchUpdated', 'TagCreated', 'TagDeleted']);
    for (const targetType of ['issue', 'merge_request', 'note', 'project'] as const) {
      expect(activityTypes({ action: 'pushed', targetType })).toEqual([]);
    }
  });

  it.each([
    ['Fix it', 'Fix it'],
    ['  Fix it  \n\nbody', 'Fix it'],
    ['Fix it\r\nbody', 'Fix it'],
    ['\nsecond line', ''],
    ['x'.repeat(70), 'x'.repeat(70)],
    ['x'.repeat(71), `${'x'.repeat(67)}...`],
    // Characters, not UTF-16 units nor bytes (Ruby's String#truncate).
    ['é'.repeat(70), 'é'.repeat(70)],
    ['😀'.repeat(71), `${'😀'.repeat(67)}...`],
    // Ruby's strip is ASCII whitespace only.
    ['\u00a0Fix\u00a0', '\u00a0Fix\u00a0'],
  ])('titles %j as %j (first line, stripped, truncate(70))', (message, title) => {
    expect(pushCommitTitle(message)).toBe(title);
  });

  it('upcasts a version-1 branch event: no details recorded, no title shown; every commit listed, counted', () => {
    installEventTypes();
    const v1 = { project_id: 7, branch: 'master', new_sha: B, commits: [B] };
    const { schemaVersion, data } = upcast('BranchCreated', 1, v1);
    expect(schemaVersion).toBe(4);
    expect(data).toEqual({ ...v1, commit_details: null, commit_count: 1 });
    expect(repositoryEvents.BranchCreated.parse(data)).toEqual(data);
    expect(activityRecord('BranchCreated', data).push_data).toMatchObject({ commit_count: 1, commit_title: null });
    const moved = upcast('BranchUpdated', 1, { project_id: 7, branch: 'master', old_sha: A, new_sha: B, commits: [B] });
    expect(moved).toEqual({ schemaVersion: 4, data: { project_id: 7, branch: 'master', old_sha: A, new_sha: B, commits: [B], commit_details: null, commit_count: 1 } });
    // The current version is left as it is.
    expect(upcast('BranchDeleted', 1, { project_id: 7, branch: 'x', old_sha: A })).toEqual({ schemaVersion: 1, data: { project_id: 7, branch: 'x', old_sha: A } });
  });

  it("upcasts details written before their authors were recorded (branch events' version 3, TagCreated's 1) without an author_id: not null, which says no user", () => {
    installEventTypes();
    const v3 = { project_id: 7, branch: 'master', old_sha: A, new_sha: B, commits: [B], commit_details: [detail('Fix')], commit_count: 1 };
    const moved = upcast('BranchUpdated', 3, v3);
    expect(moved).toEqual({ schemaVersion: 4, data: v3 });
    expect((moved.data as typeof v3).commit_details[0]).not.toHaveProperty('author_id');
    expect(activityRecord('BranchUpdated', moved.data)).toEqual(activityRecord('BranchUpdated', { ...v3, commit_details: [{ ...detail('Fix'), author_id: 12 }] }));
    const tag = { project_id: 7, tag: 'v1', target: B, commit_sha: B, message: null, commit_details: [detail('Fix')], release_description: null };
    expect(upcast('TagCreated', 1, tag)).toEqual({ schemaVersion: 2, data: tag });
    // A version-4 detail carries its author_id, a user's or null; nothing else.
    expect(repositoryEvents.BranchUpdated.safeParse({ ...v3, commit_details: [{ ...detail('Fix'), author_id: null }] }).success).toBe(true);
    expect(repositoryEvents.BranchUpdated.safeParse({ ...v3, commit_details: [{ ...detail('Fix'), author_id: 'alice' }] }).success).toBe(false);
  });
});
