import type { Context } from 'hono';
import { commitWithLabels, labelNames } from '../../../commands/labels.js';
import { handleCommands } from '../../../commands/kernel/handler.js';
import type { CommandSpec, Writer } from '../../../commands/kernel/context.js';
import type { IssueFields } from '../../../domain/issues/decider.js';
import { forbidden, notFound, recordNotFound } from '../../../domain/errors.js';
import { licensed } from '../../../domain/policy/licensed.js';
import { findEpicForIssue, projectGroup } from '../../../projections/epics/queries.js';
import { canAdminEpic } from '../../entities/epics.js';
import { issueReaders } from '../../../projections/issues/queries.js';
import type { IssueRow } from '../../../projections/issues/tables.js';
import { findMilestone } from '../../../projections/milestones/queries.js';
import { appContext, today } from '../../kernel/context.js';
import { optional, t, type Shape } from '../../kernel/params.js';
import type { ProjectScope } from '../../kernel/scope.js';

/**
 * The issue parameters create and update share (`params :issue_params` of GitLab 12.10's
 * API::Issues, EE's weight with issue_weights) and IssuableBaseService#filter_params: what a
 * caller without admin_issue may not set is dropped, assignees who could not read the issue
 * are dropped, a milestone of another project is none. Labels are created on first use.
 */

/** Every issue parameter create and update share, EE's included (what the routes document). */
export const ISSUE_PARAMS = {
  description: optional(t.string()),
  assignee_ids: optional(t.array(t.integer())),
  assignee_id: optional(t.integer()),
  milestone_id: optional(t.integer()),
  labels: optional(t.array(t.string())),
  due_date: optional(t.dateColumn()),
  confidential: optional(t.boolean()),
  discussion_locked: optional(t.boolean()),
  weight: optional(t.integer()),
  epic_id: optional(t.integer()),
  epic_iid: optional(t.integer()),
} satisfies Shape;

/** The issue parameters the instance's plan declares: `weight` with issue_weights, `epic_id` and `epic_iid` in EE. */
export function issueParams(c: Context): Shape {
  const { weight, epic_id, epic_iid, ...common } = ISSUE_PARAMS;
  const plan = appContext(c).config.plan;
  return {
    ...common,
    ...(licensed(plan, 'issue_weights') ? { weight } : {}),
    // EE's optional_issue_params_ee, whatever the plan: `mutually_exclusive :epic_id, :epic_iid` (ISSUE_RULES).
    ...(licensed(plan, 'ee') ? { epic_id, epic_iid } : {}),
  };
}

/** The rules issueParams' shape comes with. */
export const ISSUE_RULES = { mutuallyExclusive: [['epic_id', 'epic_iid']] };

export interface IssueParams {
  description?: string | undefined;
  assignee_ids?: number[] | undefined;
  assignee_id?: number | undefined;
  milestone_id?: number | undefined;
  labels?: string[] | undefined;
  due_date?: string | null | undefined;
  confidential?: boolean | undefined;
  discussion_locked?: boolean | undefined;
  weight?: number | undefined;
  epic_id?: number | undefined;
  epic_iid?: number | undefined;
}

/** The epic an issue's create or update asks for: into it, out of any (null), or unchanged (undefined). */
export type EpicAsked = { readonly id: number; readonly group_id: number } | null | undefined;

/**
 * EE's `epic_iid` and `epic_id` (GitLab 12.10): EE::API::Helpers::CommonHelpers turns an
 * `epic_iid` into the id of the readable epic with that iid in the project's group ("404 Epic
 * Not Found" without one); EE::Issues::BaseService#epic_param then finds `epic_id` among the
 * readable epics of the project's group, its subgroups and ancestors ("404 Not found"), and
 * refuses one the caller may not administer (403). `epic_id=0`, or a project outside any
 * group, takes the issue out of its epic. An epic whose group does not hold the project's
 * (EpicIssues::CreateService's linkable issues) changes nothing. EE declares both below ultimate too.
 */
export async function epicAsked(c: Context, project: ProjectScope, p: IssueParams): Promise<EpicAsked> {
  if (p.epic_id === undefined && p.epic_iid === undefined) return undefined;
  const { db } = appContext(c);
  const group = await projectGroup(db, project.row.id);
  let epicId = p.epic_id;
  // Below ultimate no epic is readable (EpicsFinder answers none without read_epic), and
  // EpicIssues::DestroyService takes no issue out of one (admin_epic_issue).
  const epics = licensed(appContext(c).config.plan, 'epics');
  if (p.epic_iid !== undefined) {
    const byIid = epics && group && (await findEpicForIssue(db, project.viewer, group, { iid: p.epic_iid }));
    if (!byIid) throw notFound('Epic');
    epicId = byIid.id;
  }
  if (epicId === undefined || epicId === 0 || !group) return epics ? null : undefined;
  const epic = epics ? await findEpicForIssue(db, project.viewer, group, { id: epicId }) : undefined;
  if (!epic) throw recordNotFound();
  if (!canAdminEpic(project.viewer, epic)) throw forbidden();
  return group.traversal_ids.includes(epic.group_id) ? { id: epic.id, group_id: epic.group_id } : undefined;
}

/** IssuableBaseService#filter_assignee: one without multiple_issue_assignees; `[0]` unassigns; nobody left, no change. */
async function filterAssignees(c: Context, project: ProjectScope, ids: readonly number[] | undefined, issue: IssueRow | undefined): Promise<number[] | undefined> {
  if (ids === undefined || ids.length === 0) return ids === undefined ? undefined : [];
  const { db, config } = appContext(c);
  const asked = licensed(config.plan, 'multiple_issue_assignees') ? [...new Set(ids)] : ids.slice(0, 1);
  if (asked.length === 1 && asked[0] === 0) return [];
  const readers = await issueReaders(db, project.row.id, asked.filter((id) => id > 0), today(c), issue);
  const kept = asked.filter((id) => readers.has(id));
  return kept.length > 0 ? kept : undefined;
}

/** The fields of a create or update as Issues::CreateService / UpdateService take them; `labels` undefined: not changed. */
export async function issueFields(c: Context, project: ProjectScope, p: IssueParams, issue?: IssueRow): Promise<{ fields: IssueFields; admin: boolean }> {
  const fields: IssueFields = {
    ...(p.description !== undefined ? { description: p.description } : {}),
    ...(p.confidential !== undefined ? { confidential: p.confidential } : {}),
  };
  if (!project.can('admin_issue')) return { fields, admin: false };
  const assignees = await filterAssignees(c, project, p.assignee_id !== undefined ? [p.assignee_id] : p.assignee_ids, issue);
  let milestoneId: number | null | undefined;
  if (p.milestone_id !== undefined) milestoneId = p.milestone_id > 0 && (await findMilestone(appContext(c).db, project.row.id, p.milestone_id)) ? p.milestone_id : null;
  return {
    admin: true,
    fields: {
      ...fields,
      ...(assignees !== undefined ? { assigneeIds: assignees } : {}),
      ...(milestoneId !== undefined ? { milestoneId } : {}),
      ...(p.due_date !== undefined ? { dueDate: p.due_date } : {}),
      ...(p.discussion_locked !== undefined ? { discussionLocked: p.discussion_locked } : {}),
      ...(p.weight !== undefined ? { weight: p.weight } : {}),
    },
  };
}

/**
 * The label ids an issue ends with: `labels` replaces, `add_labels` adds, `remove_labels`
 * removes (IssuableBaseService#process_label_ids); names not found are created on first use
 * (admin_label), all committed with the issue's own command. No label parameter: `build(undefined)`.
 */
export async function commitWithIssueLabels(
  w: Writer,
  project: ProjectScope,
  asked: { labels?: string[] | undefined; add?: string[] | undefined; remove?: string[] | undefined },
  current: readonly number[],
  build: (labelIds: number[] | undefined) => CommandSpec<any, any, any>,
): Promise<void> {
  if (asked.labels === undefined && asked.add === undefined && asked.remove === undefined) {
    await handleCommands(w, [build(undefined)]);
    return;
  }
  const names = labelNames([...(asked.labels ?? []), ...(asked.add ?? [])]);
  const removed = new Set(labelNames(asked.remove ?? []));
  const removedIds =
    removed.size === 0 ? new Set<number>() : new Set((await w.ctx.db.selectFrom('labels').select('id').where('project_id', '=', project.row.id).where('title', 'in', [...removed]).execute()).map((l) => l.id));
  await commitWithLabels(w, { projectId: project.row.id, names, mayCreate: project.can('admin_label') }, (found) => {
    const byName = new Map(found.map((l) => [l.title, l.id]));
    const base = asked.labels !== undefined ? labelNames(asked.labels).flatMap((n) => byName.get(n) ?? []) : [...current];
    const added = labelNames(asked.add ?? []).flatMap((n) => byName.get(n) ?? []);
    const ids = [...new Set([...base, ...added])].filter((id) => !removedIds.has(id)).sort((a, b) => a - b);
    return [build(ids)];
  });
}
