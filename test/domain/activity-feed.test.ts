import { describe, expect, it } from 'vitest';
import type { AnyAggregate } from '../../src/domain/aggregate.js';
import { AGGREGATES as LIST } from '../../src/domain/aggregates.js';
import { ACTIVITY, ACTIVITY_TARGET_TYPES, NO_ACTIVITY, activityRecord, activityTypes, type ActivityEventType } from '../../src/domain/feeds/activity.js';

const AGGREGATES: readonly AnyAggregate[] = LIST;

const defined = AGGREGATES.flatMap((aggregate) => aggregate.eventTypes.map((type) => ({ type, aggregate: aggregate.name })));

describe('the activity mapping', () => {
  it('decides every event type of every aggregate: activity or, with a reason, none — exactly one', () => {
    const undecided = defined.filter(({ type }) => Object.hasOwn(ACTIVITY, type) === Object.hasOwn(NO_ACTIVITY, type));
    expect(undecided.map(({ type, aggregate }) => `${type} (${aggregate})`)).toEqual([]);
    for (const reason of Object.values(NO_ACTIVITY)) expect(reason.trim()).not.toBe('');
  });

  it('names no event type that no aggregate defines', () => {
    const known = new Set(defined.map(({ type }) => type));
    expect([...Object.keys(ACTIVITY), ...Object.keys(NO_ACTIVITY)].filter((type) => !known.has(type))).toEqual([]);
  });

  // One payload per mapped type, as its schema has it.
  const SAMPLES: Record<ActivityEventType, unknown> = {
    ProjectCreated: { id: 7 },
    ProjectDeletionScheduled: { id: 7, path_with_namespace: 'alice/site' },
    GroupCreated: { id: 3, full_path: 'acme/web' },
    GroupDeletionScheduled: { id: 3, full_path: 'acme/web' },
    MemberAdded: { source_type: 'Project', source_id: 7, user_id: 9 },
    AccessRequestApproved: { source_type: 'Namespace', source_id: 3, user_id: 9 },
    MemberRemoved: { source_type: 'Project', source_id: 7, user_id: 9 },
    EpicCreated: { id: 11, group_id: 3, iid: 2, title: 'Roadmap' },
    EpicClosed: { id: 11, group_id: 3, iid: 2, title: 'Roadmap' },
    EpicReopened: { id: 11, group_id: 3, iid: 2, title: 'Roadmap' },
    MilestoneCreated: { id: 21, project_id: 7, iid: 1, title: 'v1.0' },
    MilestoneClosed: { id: 21, project_id: 7, iid: 1, title: 'v1.0' },
    MilestoneReopened: { id: 21, project_id: 7, iid: 1, title: 'v1.0' },
    MilestoneDeleted: { id: 21, project_id: 7, iid: 1, title: 'v1.0' },
    MergeRequestOpened: { id: 31, project_id: 7, iid: 1, title: 'Fix' },
    MergeRequestClosed: { id: 31, project_id: 7, iid: 1, title: 'Fix' },
    MergeRequestReopened: { id: 31, project_id: 7, iid: 1, title: 'Fix' },
    MergeRequestMerged: { id: 31, project_id: 7, iid: 1, title: 'Fix' },
    IssueOpened: { id: 51, project_id: 7, iid: 1, title: 'Bug' },
    IssueClosed: { id: 51, project_id: 7, iid: 1, title: 'Bug' },
    IssueReopened: { id: 51, project_id: 7, iid: 1, title: 'Bug' },
    BranchCreated: { project_id: 7, branch: 'topic', new_sha: 'b'.repeat(40), commits: ['b'.repeat(40)], commit_details: [{ message: 'Add it', author_name: 'Jane' }] },
    BranchUpdated: { project_id: 7, branch: 'topic', old_sha: 'a'.repeat(40), new_sha: 'b'.repeat(40), commits: ['b'.repeat(40)], commit_details: [{ message: 'Add it', author_name: 'Jane' }] },
    BranchDeleted: { project_id: 7, branch: 'topic', old_sha: 'a'.repeat(40) },
    TagCreated: { project_id: 7, tag: 'v1.0', target: 'c'.repeat(40), commit_sha: 'b'.repeat(40), message: 'Release', commit_details: [{ message: 'Add it\n\nbody', author_name: 'Jane' }], release_description: null },
    TagDeleted: { project_id: 7, tag: 'v1.0', old_sha: 'c'.repeat(40) },
    NoteAdded: { id: 410, noteable_type: 'MergeRequest', noteable_id: 31, commit_id: null, project_id: 7, group_id: null, author_id: 9, body: 'Nice', type: null, discussion_id: 'd'.repeat(40), position: null, line_code: null, noteable_iid: 1, noteable_title: 'Fix', created_at: '2020-01-01T00:00:00.000Z', resolved: false },
  };

  it("gives each event GitLab's fields, a target_type that answers to the event's target filter", () => {
    for (const [type, mapping] of Object.entries(ACTIVITY) as [ActivityEventType, (typeof ACTIVITY)[ActivityEventType]][]) {
      const record = activityRecord(type, SAMPLES[type]);
      const filtered = Object.values(ACTIVITY_TARGET_TYPES) as string[];
      if (mapping.targetFilter === null) expect(filtered, type).not.toContain(record.target_type);
      else expect(record.target_type, type).toBe(ACTIVITY_TARGET_TYPES[mapping.targetFilter]);
    }
    expect(activityRecord('ProjectCreated', SAMPLES.ProjectCreated)).toEqual({ action_name: 'created', target_id: null, target_iid: null, target_type: null, target_title: null });
    expect(activityRecord('ProjectDeletionScheduled', SAMPLES.ProjectDeletionScheduled)).toEqual({
      action_name: 'destroyed', target_id: 7, target_iid: 7, target_type: 'Project', target_title: 'alice/site',
    });
    expect(activityRecord('MemberRemoved', SAMPLES.MemberRemoved)).toEqual({ action_name: 'left', target_id: null, target_iid: null, target_type: null, target_title: null });
    expect(activityRecord('AccessRequestApproved', SAMPLES.AccessRequestApproved)).toEqual({ action_name: 'joined', target_id: 3, target_iid: 3, target_type: 'Group', target_title: null });
    // Event#action_name: a creation and a reopening are both "opened".
    const epic = { target_id: 11, target_iid: 2, target_type: 'Epic', target_title: 'Roadmap' };
    expect(activityRecord('EpicCreated', SAMPLES.EpicCreated)).toEqual({ action_name: 'opened', ...epic });
    expect(activityRecord('EpicClosed', SAMPLES.EpicClosed)).toEqual({ action_name: 'closed', ...epic });
    expect(activityRecord('EpicReopened', SAMPLES.EpicReopened)).toEqual({ action_name: 'opened', ...epic });
    const milestone = { target_id: 21, target_iid: 1, target_type: 'Milestone', target_title: 'v1.0' };
    expect(activityRecord('MilestoneCreated', SAMPLES.MilestoneCreated)).toEqual({ action_name: 'opened', ...milestone });
    expect(activityRecord('MilestoneClosed', SAMPLES.MilestoneClosed)).toEqual({ action_name: 'closed', ...milestone });
    expect(activityRecord('MilestoneReopened', SAMPLES.MilestoneReopened)).toEqual({ action_name: 'opened', ...milestone });
    expect(activityRecord('MilestoneDeleted', SAMPLES.MilestoneDeleted)).toEqual({ action_name: 'destroyed', ...milestone });
    // Git::TagPushService: the tagged commit is the payload's one commit; commit_to is the tag's target.
    expect(activityRecord('TagCreated', SAMPLES.TagCreated)).toEqual({
      action_name: 'pushed new', target_id: null, target_iid: null, target_type: null, target_title: null,
      push_data: { commit_count: 1, action: 'created', ref_type: 'tag', commit_from: null, commit_to: 'c'.repeat(40), ref: 'v1.0', commit_title: 'Add it', ref_count: null },
    });
    expect(activityRecord('TagDeleted', SAMPLES.TagDeleted)).toEqual({
      action_name: 'deleted', target_id: null, target_iid: null, target_type: null, target_title: null,
      push_data: { commit_count: 0, action: 'removed', ref_type: 'tag', commit_from: 'c'.repeat(40), commit_to: null, ref: 'v1.0', commit_title: null, ref_count: null },
    });
  });

  it('turns the action and target_type filters into event types', () => {
    expect(activityTypes({ action: 'joined' }).sort()).toEqual(['AccessRequestApproved', 'MemberAdded']);
    expect(activityTypes({ action: 'destroyed' }).sort()).toEqual(['GroupDeletionScheduled', 'MilestoneDeleted', 'ProjectDeletionScheduled']);
    expect(activityTypes({ action: 'closed' }).sort()).toEqual(['EpicClosed', 'IssueClosed', 'MergeRequestClosed', 'MilestoneClosed']);
    expect(activityTypes({ targetType: 'issue' }).sort()).toEqual(['IssueClosed', 'IssueOpened', 'IssueReopened']);
    expect(activityTypes({ targetType: 'milestone' }).sort()).toEqual(['MilestoneClosed', 'MilestoneCreated', 'MilestoneDeleted', 'MilestoneReopened']);
    expect(activityTypes({ targetType: 'project' })).toEqual(['ProjectDeletionScheduled']);
    expect(activityTypes({ targetType: 'merge_request' }).sort()).toEqual(['MergeRequestClosed', 'MergeRequestMerged', 'MergeRequestOpened', 'MergeRequestReopened']);
    expect(activityTypes({ action: 'merged' })).toEqual(['MergeRequestMerged']);
    expect(activityTypes({ action: 'commented' })).toEqual(['NoteAdded']);
    expect(activityTypes({ targetType: 'note' })).toEqual(['NoteAdded']);
    expect(activityTypes({ action: 'created', targetType: 'project' })).toEqual([]);
    expect(activityTypes({ action: 'pushed' })).toEqual(['BranchCreated', 'BranchUpdated', 'BranchDeleted', 'TagCreated', 'TagDeleted']);
    expect(activityTypes().sort()).toEqual(Object.keys(ACTIVITY).sort());
  });
});
