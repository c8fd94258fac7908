import { z } from 'zod';
import type { EventOf, EventSchemas, FeedIndex } from '../events.js';

/**
 * Merge requests (GitLab's `MergeRequest`): one aggregate per merge request, stream
 * `merge-request-<id>`, in a project (the target project; the source branch is its own or a
 * fork's, `source_project_id`). Its `iid` is allocated per project when it is opened
 * (src/commands/merge-requests.ts) and guarded by a claim.
 *
 * What a merge request shows of the repository (its versions, their diffs, the merge status)
 * comes from git objects: a version names the SHAs it was taken at and the commits it holds;
 * diffs are computed from those SHAs when read, so they need not be in the log.
 */

const sha = z.string().regex(/^[0-9a-f]{40}$/);
const ofMergeRequest = { id: z.int(), project_id: z.int(), iid: z.int() };

/** GitLab's MergeRequest merge_status values a check can leave (`unchecked` is the projection's "not yet"). */
export const MERGE_STATUSES = ['can_be_merged', 'cannot_be_merged'] as const;
export type MergeStatus = (typeof MERGE_STATUSES)[number];

/**
 * A diff version (GitLab's MergeRequestDiff): the source head, the merge base with the target
 * (`base`), the target head (`start`), and the commits of the source not in the target,
 * newest first. `files_count` is GitLab's `real_size` (the number of changed files).
 */
export const versionSchema = z.strictObject({
  version_id: z.int(),
  head_commit_sha: sha,
  base_commit_sha: sha.nullable(),
  start_commit_sha: sha,
  commit_shas: z.array(sha),
  files_count: z.int(),
});
export type VersionData = z.infer<typeof versionSchema>;

/** The fields a merge request's update may change (only what changed is in the event). */
const changeable = {
  title: z.string(),
  description: z.string().nullable(),
  target_branch: z.string(),
  assignee_ids: z.array(z.int()),
  milestone_id: z.int().nullable(),
  label_ids: z.array(z.int()),
  discussion_locked: z.boolean().nullable(),
  squash: z.boolean(),
  force_remove_source_branch: z.boolean(),
  allow_collaboration: z.boolean(),
};

export const mergeRequestEvents = {
  MergeRequestOpened: z.strictObject({
    ...ofMergeRequest,
    author_id: z.int(),
    source_project_id: z.int(),
    source_branch: z.string(),
    ...changeable,
    /** The first diff version, taken when the merge request is opened. */
    version: versionSchema,
  }),
  MergeRequestUpdated: z.strictObject({
    ...ofMergeRequest,
    changes: z.strictObject({
      title: changeable.title.optional(),
      description: changeable.description.optional(),
      target_branch: changeable.target_branch.optional(),
      assignee_ids: changeable.assignee_ids.optional(),
      milestone_id: changeable.milestone_id.optional(),
      label_ids: changeable.label_ids.optional(),
      discussion_locked: changeable.discussion_locked.optional(),
      squash: changeable.squash.optional(),
      force_remove_source_branch: changeable.force_remove_source_branch.optional(),
      allow_collaboration: changeable.allow_collaboration.optional(),
    }),
    /**
     * The values the changed title, description and assignees had: what the todos reactor
     * diffs against (a newly mentioned or assigned user), as GitLab's UpdateService does.
     */
    previous: z.strictObject({
      title: changeable.title.optional(),
      description: changeable.description.optional(),
      assignee_ids: changeable.assignee_ids.optional(),
    }),
  }),
  /** The title rides along for the activity feed's target_title; `by_id` is GitLab's metrics' latest_closed_by. */
  MergeRequestClosed: z.strictObject({ ...ofMergeRequest, title: z.string(), by_id: z.int() }),
  MergeRequestReopened: z.strictObject({ ...ofMergeRequest, title: z.string() }),
  /** Accepted: the merge commit on the target branch (its ref move is the repository stream's event of the same transaction). */
  MergeRequestMerged: z.strictObject({
    ...ofMergeRequest,
    title: z.string(),
    by_id: z.int(),
    merge_commit_sha: sha,
    squash_commit_sha: sha.nullable(),
  }),
  MergeRequestDeleted: z.strictObject(ofMergeRequest),
  /** A new diff version: the source branch moved (GitLab's MergeRequests::RefreshService). */
  MergeRequestVersionRecorded: z.strictObject({ ...ofMergeRequest, version: versionSchema }),
  /** The outcome of a mergeability check of the source head into the target head. */
  MergeRequestMergeStatusChecked: z.strictObject({
    ...ofMergeRequest,
    merge_status: z.enum(MERGE_STATUSES),
    source_sha: sha,
    target_sha: sha,
  }),
  /**
   * The merge ref (refs/merge-requests/:iid/merge, GitLab's MergeToRefService): the merge commit
   * of the source head into the target head, made for GET …/merge_ref without moving a branch.
   */
  MergeRequestMergeRefUpdated: z.strictObject({ ...ofMergeRequest, commit_sha: sha, target_sha: sha, source_sha: sha }),
  /** A rebase that could not be done (a change conflicts): GitLab's merge_error, MergeRequests::RebaseService::REBASE_ERROR. */
  MergeRequestRebaseFailed: z.strictObject({ ...ofMergeRequest, merge_error: z.string() }),
  MergeRequestTimeEstimateChanged: z.strictObject({ ...ofMergeRequest, time_estimate: z.int().nonnegative() }),
  /** A timelog: seconds spent by a user (negative subtracts); GitLab's reset is a timelog of minus the total. */
  MergeRequestTimeSpent: z.strictObject({ ...ofMergeRequest, user_id: z.int(), time_spent: z.int(), reset: z.boolean() }),
  MergeRequestSubscribed: z.strictObject({ ...ofMergeRequest, user_id: z.int() }),
  MergeRequestUnsubscribed: z.strictObject({ ...ofMergeRequest, user_id: z.int() }),
} satisfies EventSchemas;

export type MergeRequestEvent = EventOf<typeof mergeRequestEvents>;
export type MergeRequestEventOf<T extends MergeRequestEvent['type']> = Extract<MergeRequestEvent, { type: T }>;

export const mergeRequestStreamId = (id: number) => `merge-request-${id}`;

export const mergeRequestEventIndex = (event: MergeRequestEvent): FeedIndex => ({
  projectId: event.data.project_id,
  targetType: 'MergeRequest',
  targetId: event.data.id,
});
