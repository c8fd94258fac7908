import { Hono, type Context } from 'hono';
import { handleCommands } from '../../../commands/kernel/handler.js';
import { commitWithLabels, labelNames } from '../../../commands/labels.js';
import { openMergeRequestCommand, updateMergeRequestCommand } from '../../../commands/merge-requests.js';
import type { MergeRequestFields } from '../../../domain/merge-requests/decider.js';
import { DomainError, recordNotFound, unprocessable } from '../../../domain/errors.js';
import { inForkNetworkOf } from '../../../projections/projects/queries.js';
import { licensed } from '../../../domain/policy/licensed.js';
import { findMergeRequestById, mergeRequestReaders } from '../../../projections/merge-requests/queries.js';
import type { MergeRequestRow } from '../../../projections/merge-requests/tables.js';
import { findMilestone } from '../../../projections/milestones/queries.js';
import { commitsBetween } from '../../../projections/repository/history.js';
import { findBranch } from '../../../projections/repository/queries.js';
import { authenticate, requireWriter } from '../../kernel/auth.js';
import { appContext, today, type AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { declaration, integerCheck, optional, rawParams, required, t, type RawParams } from '../../kernel/params.js';
import { checkUnmodifiedSince } from '../../kernel/request.js';
import { userProject, type ProjectScope } from '../../kernel/scope.js';
import type { MergeRequestDetail } from '../../entities/merge-requests.js';
import { canOnMergeRequest, mergeRequestOf, presentMergeRequest } from './find.js';
import { newId, run, spec } from '../../../commands/kernel/run.js';
import { mergeRequests } from '../../../domain/merge-requests/aggregate.js';
import type { Writer } from '../../../commands/kernel/context.js';

/**
 * GitLab 12's API::MergeRequests: create, show, update and delete one merge request
 * (lib/api/merge_requests.rb with MergeRequests::CreateService / UpdateService and
 * IssuableBaseService#filter_params). See docs/merge-requests.md.
 */

/** `params :optional_params` (CE; EE's approvals_before_merge is not taken). */
const optionalParams = {
  description: optional(t.string()),
  assignee_id: optional(t.integer()),
  assignee_ids: optional(t.array(t.integer())),
  milestone_id: optional(t.integer()),
  labels: optional(t.array(t.string())),
  remove_source_branch: optional(t.boolean()),
  allow_collaboration: optional(t.boolean()),
  allow_maintainer_to_push: optional(t.boolean()),
  squash: optional(t.boolean()),
};

const createShape = {
  title: required(t.string()),
  source_branch: required(t.string()),
  target_branch: required(t.string()),
  target_project_id: optional(t.integer()),
  ...optionalParams,
};

const updateShape = {
  title: optional(t.string(), { notBlank: true }),
  target_branch: optional(t.string(), { notBlank: true }),
  state_event: optional(t.values(['close', 'reopen'])),
  discussion_locked: optional(t.boolean()),
  ...optionalParams,
};

/** API::MergeRequests.update_params_at_least_one_of. */
const UPDATE_AT_LEAST_ONE_OF = [
  'assignee_id',
  'assignee_ids',
  'description',
  'labels',
  'milestone_id',
  'remove_source_branch',
  'state_event',
  'target_branch',
  'title',
  'discussion_locked',
  'squash',
];

/** `requires :merge_request_iid, type: Integer` (show and delete; update declares no type). */
const ON_MERGE_REQUEST = { pathIds: ['merge_request_iid'] } as const;

const singleShape = {
  render_html: optional(t.boolean()),
  include_diverged_commits_count: optional(t.boolean()),
  include_rebase_in_progress: optional(t.boolean()),
};

type OptionalParams = {
  description?: string | undefined;
  assignee_id?: number | undefined;
  assignee_ids?: number[] | undefined;
  milestone_id?: number | undefined;
  labels?: string[] | undefined;
  remove_source_branch?: boolean | undefined;
  allow_collaboration?: boolean | undefined;
  allow_maintainer_to_push?: boolean | undefined;
  squash?: boolean | undefined;
};

/** Grape's allow_blank: false takes a string of spaces for blank too (`"  ".blank?`). */
const blankCheck = (raw: RawParams, name: string) => (typeof raw[name] === 'string' && raw[name] !== '' && (raw[name] as string).trim() === '' ? `${name} is empty` : undefined);

/**
 * IssuableBaseService#filter_assignee: one assignee without the licence for several
 * (MergeRequest#allows_multiple_assignees?), the users who cannot read the project's merge
 * requests dropped; `[0]` (IssuableFinder's NONE) unassigns; when nobody is left the
 * assignees are not changed. `[]` unassigns.
 */
async function filterAssignees(c: Context, project: ProjectScope, ids: readonly number[] | undefined): Promise<number[] | undefined> {
  if (ids === undefined || ids.length === 0) return ids === undefined ? undefined : [];
  const { db, config } = appContext(c);
  const asked = licensed(config.plan, 'multiple_merge_request_assignees') ? [...new Set(ids)] : ids.slice(0, 1);
  if (asked.length === 1 && asked[0] === 0) return [];
  const readers = await mergeRequestReaders(db, project.row.id, asked.filter((id) => id > 0), today(c));
  const kept = asked.filter((id) => readers.has(id));
  return kept.length > 0 ? kept : undefined;
}

/** IssuableBaseService#filter_milestone: a milestone of another project (or 0) is none. */
async function filterMilestone(c: Context, project: ProjectScope, id: number | undefined): Promise<number | null | undefined> {
  if (id === undefined) return undefined;
  if (id < 1) return null;
  return (await findMilestone(appContext(c).db, project.row.id, id)) ? id : null;
}

/**
 * The fields of a create or update, as the services take them: `remove_source_branch` is
 * `force_remove_source_branch`, `assignee_id` the legacy form of `assignee_ids`
 * (convert_parameters_from_legacy_format), and without admin_merge_request the milestone,
 * labels, assignees and lock are dropped (filter_params). Labels come separately (created on
 * first use); `undefined` labels: not changed.
 */
async function fieldsOf(
  c: Context,
  project: ProjectScope,
  p: OptionalParams & { discussion_locked?: boolean | undefined },
  mayAdmin: boolean,
): Promise<{ fields: MergeRequestFields; labels: string[] | undefined }> {
  const assigneeIds = p.assignee_id !== undefined ? [p.assignee_id] : p.assignee_ids;
  const allowCollaboration = p.allow_collaboration ?? p.allow_maintainer_to_push;
  const fields: MergeRequestFields = {
    ...(p.description !== undefined ? { description: p.description } : {}),
    ...(p.remove_source_branch !== undefined ? { forceRemoveSourceBranch: p.remove_source_branch } : {}),
    ...(allowCollaboration !== undefined ? { allowCollaboration } : {}),
    ...(p.squash !== undefined ? { squash: p.squash } : {}),
  };
  if (!mayAdmin) return { fields, labels: undefined };
  const assignees = await filterAssignees(c, project, assigneeIds);
  const milestoneId = await filterMilestone(c, project, p.milestone_id);
  return {
    fields: {
      ...fields,
      ...(assignees !== undefined ? { assigneeIds: assignees } : {}),
      ...(milestoneId !== undefined ? { milestoneId } : {}),
      ...(p.discussion_locked !== undefined ? { discussionLocked: p.discussion_locked } : {}),
    },
    labels: p.labels === undefined ? undefined : labelNames(p.labels),
  };
}

/** Labels::FindOrCreateService for the names given (admin_label creates), then the merge request's own command, in one transaction. */
async function commitWith(
  w: Writer,
  project: ProjectScope,
  labels: string[] | undefined,
  build: (labelIds: number[] | undefined) => ReturnType<typeof spec<typeof mergeRequests>>,
) {
  if (labels === undefined) {
    await handleCommands(w, [build(undefined)]);
    return;
  }
  await commitWithLabels(w, { projectId: project.row.id, names: labels, mayCreate: project.can('admin_label') }, (found) => [
    build(found.map((l) => l.id).sort((a, b) => a - b)),
  ]);
}

/** HTML of a title and description as `render_html=true` shows them (see docs/merge-requests.md: no Markdown rendering). */
const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
function descriptionHtml(text: string | null): string {
  if (text === null || text.trim() === '') return '';
  return text
    .split(/\n\s*\n/)
    .filter((para) => para.trim() !== '')
    .map((para) => `<p dir="auto">${escapeHtml(para.trim()).replace(/\n/g, '<br>\n')}</p>`)
    .join('\n');
}

/**
 * MergeRequest#diverged_commits_count: the target branch's commits the source branch lacks
 * (`count_commits_between(source_branch_sha, target_branch_sha)`), 0 when a branch is gone.
 */
async function divergedCommitsCount(c: Context, row: MergeRequestRow): Promise<number> {
  const { db } = appContext(c);
  const [source, target] = await Promise.all([findBranch(db, row.source_project_id, row.source_branch), findBranch(db, row.project_id, row.target_branch)]);
  if (!source || !target) return 0;
  // A fork's source head is in this repository as far as it was fetched: the latest version's.
  const sourceSha = row.source_project_id === row.project_id ? source.sha : row.head_sha;
  return (await commitsBetween(db, row.project_id, sourceSha, target.sha)).length;
}

async function present(c: Context, project: ProjectScope, id: number, status: 200 | 201 = 200, detail: Partial<MergeRequestDetail> = {}) {
  const row = await findMergeRequestById(appContext(c).db, id);
  if (!row) throw recordNotFound('Merge Request');
  return c.json(await presentMergeRequest(c, project, row, detail), status);
}

export const mergeRequestCrudRoutes = new Hono<AppEnv>()
  .post('/projects/:id/merge_requests', documented({ summary: 'Create a merge request', params: createShape, responses: { 201: 'MergeRequest', ...REFUSED, 422: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const raw = await rawParams(c);
    const p = declaration(raw);
    const parsed = p.parse(createShape);
    p.done();
    const source = await userProject(c, w.auth, 'create_merge_request_from');
    // CreateService#set_projects!: the target is `target_project_id` (Project.find: 404 for one the
    // caller may not see either), refused unless the caller may open merge requests there, and
    // MergeRequest#validate_fork: another target must be of the source's fork network.
    let project = source;
    if (parsed.target_project_id !== undefined && parsed.target_project_id !== source.row.id) {
      project = await userProject(c, w.auth, 'create_merge_request_in', String(parsed.target_project_id)).catch((error: unknown) => {
        throw error instanceof DomainError && error.code === 'not_found' ? recordNotFound('Project') : error;
      });
      if (!(await inForkNetworkOf(appContext(c).db, source.row.id, project.row.id))) throw unprocessable(['Source project is not a fork of the target project']);
    }
    const { fields, labels } = await fieldsOf(c, project, parsed, project.can('admin_merge_request'));
    const id = await newId(w, mergeRequests);
    await commitWith(w, project, labels, (labelIds) =>
      spec(
        mergeRequests,
        id,
        openMergeRequestCommand({
          projectId: project.row.id,
          sourceProjectId: source.row.id,
          authorId: w.auth.user.id,
          title: parsed.title,
          sourceBranch: parsed.source_branch,
          targetBranch: parsed.target_branch,
          fields: { ...fields, ...(labelIds !== undefined ? { labelIds } : {}) },
        }),
        { newStream: true },
      ),
    );
    // Its row holds the merge status the opening checked. Known from the command: `subscribed` —
    // the author participates, and a new merge request has no subscription.
    return present(c, project, id, 201, { subscribed: true });
  })

  .get('/projects/:id/merge_requests/:merge_request_iid', documented({ summary: 'Get a single merge request', params: singleShape, ...ON_MERGE_REQUEST, auth: 'optional', responses: { 200: 'MergeRequest', ...REFUSED } }), async (c) => {
    // API::MergeRequests: `before { authenticate_non_get! }` — a public project's merge requests are anyone's to read.
    const auth = await authenticate(c);
    const raw = await rawParams(c);
    const p = declaration(raw);
    p.check(integerCheck(c, 'merge_request_iid'));
    const options = p.parse(singleShape);
    p.done();
    const project = await userProject(c, auth);
    const row = await mergeRequestOf(c, project, 'read_merge_request');
    const body = await presentMergeRequest(c, project, row, {
      ...(options.include_diverged_commits_count ? { divergedCommitsCount: await divergedCommitsCount(c, row) } : {}),
    });
    return c.json({
      ...body,
      ...(options.render_html ? { title_html: escapeHtml(row.title), description_html: descriptionHtml(row.description) } : {}),
      // No rebase in forgelog: none is ever in progress.
      ...(options.include_rebase_in_progress ? { rebase_in_progress: false } : {}),
    });
  })

  .put('/projects/:id/merge_requests/:merge_request_iid', documented({ summary: 'Update a merge request', params: updateShape, responses: { 200: 'MergeRequest', ...REFUSED, 422: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const raw = await rawParams(c);
    const p = declaration(raw);
    const parsed = p.parse(updateShape, { atLeastOneOf: [UPDATE_AT_LEAST_ONE_OF] });
    p.check(blankCheck(raw, 'title'));
    p.check(blankCheck(raw, 'target_branch'));
    p.done();
    const project = await userProject(c, w.auth);
    const row = await mergeRequestOf(c, project, 'update_merge_request');
    const { fields, labels } = await fieldsOf(c, project, parsed, canOnMergeRequest(project, row, 'admin_merge_request'));
    const targetBranch = parsed.target_branch ?? row.target_branch;
    await commitWith(w, project, labels, (labelIds) =>
      spec(mergeRequests, 
        row.id,
        updateMergeRequestCommand({
          id: row.id,
          projectId: project.row.id,
          sourceProjectId: row.source_project_id,
          sourceBranch: row.source_branch,
          targetBranch,
          previousTargetBranch: row.target_branch,
          fields: {
            ...fields,
            ...(parsed.title !== undefined ? { title: parsed.title } : {}),
            ...(parsed.target_branch !== undefined ? { targetBranch: parsed.target_branch } : {}),
            ...(labelIds !== undefined ? { labelIds } : {}),
          },
          stateEvent: parsed.state_event,
          byId: w.auth.user.id,
        }),
      ),
    );
    return present(c, project, row.id);
  })

  .delete('/projects/:id/merge_requests/:merge_request_iid', documented({ summary: 'Delete a merge request', ...ON_MERGE_REQUEST, responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c);
    const raw = await rawParams(c);
    const p = declaration(raw);
    p.check(integerCheck(c, 'merge_request_iid'));
    p.done();
    const project = await userProject(c, w.auth);
    // find_project_merge_request (no read check), then authorize! :destroy_merge_request.
    const row = await mergeRequestOf(c, project, 'destroy_merge_request');
    checkUnmodifiedSince(c, row.updated_at);
    await run(w, mergeRequests, row.id, { type: 'DeleteMergeRequest' });
    return c.body(null, 204);
  });
