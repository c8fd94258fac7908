import { DomainError } from '../domain/errors.js';
import { mergeRequests } from '../domain/merge-requests/aggregate.js';
import type { MergeRequestFields } from '../domain/merge-requests/decider.js';
import {
  builtTitle,
  fullMessagesOf,
  type MergeRequestPushOptions,
  optionBoolean,
  optionText,
  type PushedChange,
  pushOptionBranches,
  pushOptionRefusals,
} from '../domain/repository/push-options.js';
import { commitsBetween } from '../projections/repository/history.js';
import { findCommits } from '../projections/repository/queries.js';
import type { Writer } from './kernel/context.js';
import { newId, spec } from './kernel/run.js';
import { commitWithLabels, findOrCreateLabels } from './labels.js';
import { openMergeRequestCommand, updateMergeRequestCommand } from './merge-requests.js';

/**
 * `git push -o merge_request.…`: GitLab 12.10's MergeRequests::PushOptionsHandlerService, run
 * after the push's refs are written (PostReceiveService), as the pushing user, through the
 * commands the merge requests API runs (openMergeRequestCommand, updateMergeRequestCommand,
 * labels found or created on first use). It never fails the push: what went wrong is
 * returned as GitLab's error lines, which the route shows to the pusher. See
 * docs/repository.md, "Push options".
 */

export interface PushOptionsInput {
  /** The pushed project: the merge request's source. */
  readonly projectId: number;
  /**
   * Where a merge request is opened and looked for: the project's default_merge_request_target
   * (its upstream, for a fork: defaultMergeRequestTarget); the project itself when not given.
   */
  readonly targetProjectId?: number;
  readonly userId: number;
  /** The pushed refs and their new values, as the push wrote them. */
  readonly changes: readonly PushedChange[];
  readonly options: MergeRequestPushOptions;
  /**
   * The pusher's abilities: `create`, create_merge_request_from on the project and _in on the
   * target; the others (update_merge_request, admin_merge_request, admin_label) on the target.
   */
  readonly may: { readonly create: boolean; readonly update: boolean; readonly read: boolean; readonly admin: boolean; readonly adminLabel: boolean };
  /** Told of an error that is not the services' own (GitLab logs it and reports "An unknown error occurred"). */
  readonly onUnknownError: (error: unknown, branch: string) => void;
}

/** The handler's errors (empty when every branch went through). */
export async function handlePushOptions(w: Writer, input: PushOptionsInput): Promise<string[]> {
  const { db } = w.ctx;
  const { projectId, options } = input;
  const targetProjectId = input.targetProjectId ?? projectId;
  // Read after the push: a first push has just made its branch the default one. The target's
  // default branch is the one left out and the one a new merge request targets.
  const project = await db.selectFrom('projects').select(['path_with_namespace', 'default_branch', 'merge_requests_enabled']).where('id', '=', targetProjectId).executeTakeFirst();
  if (!project) return [];
  const branches = pushOptionBranches(input.changes, project.default_branch);
  const target = options.target === undefined ? undefined : optionText(options.target);
  const headsOf = async (id: number, names: readonly string[]) =>
    new Map((await db.selectFrom('repository_branches').select(['name', 'sha']).where('project_id', '=', id).where('name', 'in', [...names, '']).execute()).map((row) => [row.name, row.sha]));
  const targetBranchNames = [target ?? project.default_branch ?? '', project.default_branch ?? ''];
  const heads = await headsOf(projectId, targetProjectId === projectId ? [...branches, ...targetBranchNames] : branches);
  const targetHeads = targetProjectId === projectId ? heads : await headsOf(targetProjectId, targetBranchNames);
  const refusals = pushOptionRefusals({
    fullPath: project.path_with_namespace,
    mergeRequestsEnabled: project.merge_requests_enabled,
    branches,
    target,
    targetExists: target !== undefined && targetHeads.has(target),
  });
  if (refusals.length > 0) return refusals;
  if (branches.length === 0) return [];

  const open = new Map(
    (
      await db
        .selectFrom('merge_requests')
        .select(['id', 'source_branch', 'target_branch', 'label_ids', 'author_id', 'assignee_ids'])
        .where('project_id', '=', targetProjectId)
        .where('source_project_id', '=', projectId)
        .where('state', '=', 'opened')
        .where('source_branch', 'in', branches)
        .orderBy('iid')
        .execute()
    ).map((row) => [row.source_branch, row]),
  );
  const errors: string[] = [];
  for (const branch of branches) {
    try {
      const existing = open.get(branch);
      if (existing) await update(w, input, existing, target);
      else if (options.create === undefined) errors.push(`A merge_request.create push option is required to create a merge request for branch ${branch}`);
      else await create(w, input, branch, target ?? project.default_branch ?? 'master', heads, targetHeads);
    } catch (error) {
      if (error instanceof AccessDenied) errors.push('User access was denied');
      else if (error instanceof DomainError) errors.push(...fullMessagesOf(error));
      else {
        input.onUnknownError(error, branch);
        errors.push('An unknown error occurred');
      }
    }
  }
  return errors;
}

/** Gitlab::Access::AccessDeniedError, which the handler reports as "User access was denied". */
class AccessDenied extends Error {}

/** PushOptionsHandlerService#base_params, as the services' fields (force_remove_source_branch cast to a boolean). */
function baseFields(options: MergeRequestPushOptions): MergeRequestFields {
  const removeSource = optionBoolean(options.remove_source_branch);
  return {
    ...(options.title !== undefined ? { title: optionText(options.title) } : {}),
    ...(options.description !== undefined ? { description: optionText(options.description) } : {}),
    ...(removeSource !== undefined ? { forceRemoveSourceBranch: removeSource } : {}),
  };
}

/** The label ids after `label` (found or created) and `unlabel` (found only): IssuableBaseService#process_label_ids. */
function labelIdsAfter(current: readonly number[], added: readonly { id: number }[], removed: readonly { id: number }[]): number[] {
  const out = new Set(current);
  for (const label of added) out.add(label.id);
  for (const label of removed) out.delete(label.id);
  return [...out].sort((a, b) => a - b);
}

async function removedLabels(w: Writer, input: PushOptionsInput): Promise<readonly { id: number }[]> {
  if (!input.may.admin || !input.options.unlabel?.length) return [];
  return (await findOrCreateLabels(w.ctx.db, { projectId: targetOf(input), names: input.options.unlabel, mayCreate: false })).labels;
}

/** The project the merge request is opened in and whose labels it takes. */
const targetOf = (input: PushOptionsInput) => input.targetProjectId ?? input.projectId;

/**
 * BuildService's commits for the default title: the source branch's commits the target branch
 * lacks, read in the source project. A fork may not hold its upstream's newer head: its own
 * branch of that name stands in for it then.
 */
async function builtCommitsBase(w: Writer, input: PushOptionsInput, targetBranch: string, targetSha: string | undefined): Promise<string | undefined> {
  if (targetSha === undefined || targetOf(input) === input.projectId) return targetSha;
  const { db } = w.ctx;
  if ((await findCommits(db, input.projectId, [targetSha])).length === 1) return targetSha;
  return (await db.selectFrom('repository_branches').select('sha').where('project_id', '=', input.projectId).where('name', '=', targetBranch).executeTakeFirst())?.sha;
}

/** create!: BuildService's title and description, then CreateService (the author assigned). */
async function create(w: Writer, input: PushOptionsInput, branch: string, targetBranch: string, heads: ReadonlyMap<string, string>, targetHeads: ReadonlyMap<string, string>): Promise<void> {
  if (!input.may.create) throw new AccessDenied();
  const { db } = w.ctx;
  const sourceSha = heads.get(branch);
  const targetSha = await builtCommitsBase(w, input, targetBranch, targetHeads.get(targetBranch));
  let built = { title: branch, description: null as string | null };
  if (sourceSha !== undefined) {
    const shas = targetSha === undefined ? [] : await commitsBetween(db, input.projectId, targetSha, sourceSha);
    const commits = shas.length === 1 ? await findCommits(db, input.projectId, shas) : shas.map(() => ({ message: '' }));
    built = builtTitle(
      branch,
      commits.map((c) => {
        const [title = '', ...rest] = c.message.split('\n');
        return { title, description: rest.join('\n') };
      }),
    );
  }
  const fields = baseFields(input.options);
  const removed = await removedLabels(w, input);
  const id = await newId(w, mergeRequests);
  const mergeRequest = (labelIds: number[] | undefined) =>
    spec(
      mergeRequests,
      id,
      openMergeRequestCommand({
        projectId: targetOf(input),
        sourceProjectId: input.projectId,
        authorId: input.userId,
        title: fields.title ?? built.title,
        sourceBranch: branch,
        targetBranch,
        fields: {
          ...fields,
          ...(fields.description === undefined && built.description !== null ? { description: built.description } : {}),
          // create_params: `assignees: [current_user]`.
          assigneeIds: [input.userId],
          ...(labelIds !== undefined ? { labelIds } : {}),
        },
      }),
    );
  const added = input.may.admin ? (input.options.label ?? []) : [];
  await commitWithLabels(w, { projectId: targetOf(input), names: added, mayCreate: input.may.adminLabel }, (found) => [
    mergeRequest(added.length > 0 || removed.length > 0 ? labelIdsAfter([], found, removed) : undefined),
  ]);
}

/** update!: UpdateService with the same parameters (the target branch, when given, retargets). */
async function update(
  w: Writer,
  input: PushOptionsInput,
  existing: { id: number; source_branch: string; target_branch: string; label_ids: number[]; author_id: number; assignee_ids: number[] },
  target: string | undefined,
): Promise<void> {
  // IssuablePolicy: the author and the assignees update their own merge request (a fork's author in the upstream).
  const own = existing.author_id === input.userId || existing.assignee_ids.includes(input.userId);
  if (!input.may.update && !(own && input.may.read)) throw new AccessDenied();
  const fields = baseFields(input.options);
  const removed = await removedLabels(w, input);
  const added = input.may.admin ? (input.options.label ?? []) : [];
  const targetBranch = target ?? existing.target_branch;
  // Nothing to change (`merge_request.create` again, `merge_when_pipeline_succeeds` alone): UpdateService saves nothing.
  if (Object.keys(fields).length === 0 && added.length === 0 && removed.length === 0 && targetBranch === existing.target_branch) return;
  await commitWithLabels(w, { projectId: targetOf(input), names: added, mayCreate: input.may.adminLabel }, (found) => [
    spec(
      mergeRequests,
      existing.id,
      updateMergeRequestCommand({
        id: existing.id,
        projectId: targetOf(input),
        sourceProjectId: input.projectId,
        sourceBranch: existing.source_branch,
        targetBranch,
        previousTargetBranch: existing.target_branch,
        fields: {
          ...fields,
          ...(target !== undefined ? { targetBranch: target } : {}),
          ...(added.length > 0 || removed.length > 0 ? { labelIds: labelIdsAfter(existing.label_ids, found, removed) } : {}),
        },
        byId: input.userId,
      }),
    ),
  ]);
}
