import type { Db } from '../database/database.js';
import type { InheritedEpicLink, IssueCommand, IssueFields } from '../domain/issues/decider.js';
import { issues } from '../domain/issues/aggregate.js';
import type { IssueRow } from '../projections/issues/tables.js';
import { placementAtStart } from './epic-issues.js';
import { copyNotesSpec, notesToCopy, referenceRewriter } from './issue-move-notes.js';
import { handleCommands } from './kernel/handler.js';
import { nextIid, type IidCounter } from './kernel/iids.js';
import { newId, spec } from './kernel/run.js';
import type { Writer } from './kernel/context.js';

/** Issues' iids, per project; the lock key space is 'isss' as an int. */
const ISSUE_IIDS: IidCounter = { table: 'issue_iids', scope: 'project_id', lockSpace: 0x69737373 };

export interface OpenIssueInput {
  readonly projectId: number;
  readonly authorId: number;
  readonly title: string;
  readonly fields: IssueFields;
  readonly createdAt?: string | undefined;
  readonly movedFromId?: number | undefined;
  /** The `iid` an administrator or owner gave (`set_issue_iid`); otherwise the project's next. */
  readonly iid?: number | undefined;
  /** EE: the epic the issue goes in, and a new link id for it (src/commands/epic-issues.ts). */
  readonly epic?: { readonly epic: { readonly id: number; readonly group_id: number }; readonly newLinkId: number } | undefined;
  /** EE: a moved issue's epic link, which the new issue takes. */
  readonly inheritedEpicLink?: InheritedEpicLink | undefined;
}

/**
 * Issues::CreateService: the next iid of the project, taken in the write transaction, or the
 * one given (AtomicInternalId#track_greatest: the projection's counter moves past it; a
 * taken one is the claim's "409 Duplicated issue").
 */
export function openIssueCommand(input: OpenIssueInput): (trx: Db) => Promise<IssueCommand> {
  return async (trx) => ({
    type: 'OpenIssue',
    projectId: input.projectId,
    iid: input.iid ?? (await nextIid(trx, ISSUE_IIDS, input.projectId)),
    authorId: input.authorId,
    title: input.title,
    fields: input.fields,
    createdAt: input.createdAt,
    movedFromId: input.movedFromId,
    epic: input.epic ? await placementAtStart(input.epic.epic, input.epic.newLinkId)(trx) : undefined,
    inheritedEpicLink: input.inheritedEpicLink,
  });
}

/**
 * Issues::MoveService (GitLab 12): a new issue in the target project — the original's title,
 * description (references rewritten), its notes copied (./issue-move-notes.ts), author, assignees, confidentiality, due date and weight, the target's labels
 * and milestone of the same titles — and the original closed with `moved_to_id`, in one
 * transaction; `epicLink`, the original's epic link, which the new issue takes (EE). The new
 * issue's id.
 */
export async function moveIssue(w: Writer, original: IssueRow, toProjectId: number, byId: number, epicLink?: Omit<InheritedEpicLink, 'fromIssueId'>): Promise<number> {
  const db = w.ctx.db;
  const labelTitles = original.label_ids.length === 0 ? [] : (await db.selectFrom('labels').select('title').where('id', 'in', original.label_ids).execute()).map((l) => l.title);
  const labels = labelTitles.length === 0 ? [] : await db.selectFrom('labels').select('id').where('project_id', '=', toProjectId).where('title', 'in', labelTitles).orderBy('id').execute();
  const milestone = original.milestone_id === null ? undefined : await db.selectFrom('milestones').select('title').where('id', '=', original.milestone_id).executeTakeFirst();
  const targetMilestone = milestone ? await db.selectFrom('milestones').select('id').where('project_id', '=', toProjectId).where('title', '=', milestone.title).executeTakeFirst() : undefined;
  const id = await newId(w, issues);
  // Issuable::Clone::ContentRewriter: the description and the notes, references rewritten for the target, the notes copied.
  const paths = await db.selectFrom('projects').select(['id', 'path_with_namespace']).where('id', 'in', [original.project_id, toProjectId]).execute();
  const pathOf = (projectId: number) => paths.find((p) => p.id === projectId)?.path_with_namespace ?? '';
  const copied = await notesToCopy(db, original);
  const rewrite = await referenceRewriter(w, byId, [original.description, ...copied.map((n) => n.body)], pathOf(original.project_id), pathOf(toProjectId));
  const copyNotes = await copyNotesSpec(w, copied, { id, projectId: toProjectId }, rewrite);
  await handleCommands(w, [
    spec(
      issues,
      id,
      openIssueCommand({
        projectId: toProjectId,
        authorId: original.author_id,
        title: original.title,
        fields: {
          description: rewrite(original.description),
          assigneeIds: original.assignee_ids,
          labelIds: labels.map((l) => l.id),
          milestoneId: targetMilestone?.id ?? null,
          dueDate: original.due_date,
          confidential: original.confidential,
          weight: original.weight,
        },
        movedFromId: original.id,
        inheritedEpicLink: epicLink && { ...epicLink, fromIssueId: original.id },
      }),
      { newStream: true },
    ),
    ...copyNotes,
    spec(issues, original.id, { type: 'MoveIssue', toId: id, byId, epicLinkId: epicLink?.id }),
  ]);
  return id;
}
