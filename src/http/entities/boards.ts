import type { Config } from '../../config.js';
import type { Db } from '../../database/database.js';
import { licensed, type Plan } from '../../domain/policy/licensed.js';
import { listsOfBoards } from '../../projections/boards/queries.js';
import type { BoardListRow, BoardRow } from '../../projections/boards/tables.js';
import type { LabelRow } from '../../projections/labels/tables.js';
import type { MilestoneRow } from '../../projections/milestones/tables.js';
import type { UserRow } from '../../projections/users.js';
import { toLabelBasic } from './labels.js';
import { toMilestone } from './milestones.js';
import { presentProjectBasic } from './projects.js';
import { toUserBasic } from './users.js';

/** Board#milestone's special values (EE): Milestone::Upcoming and Milestone::Started, shown as SpecialBoardFilter. */
export const SPECIAL_BOARD_MILESTONES: Readonly<Record<number, string>> = { [-2]: 'Upcoming', [-3]: 'Started' };

/** What a page of boards embeds, read once for the page. */
interface BoardsContext {
  readonly config: Config;
  readonly plan: Plan;
  readonly project: Record<string, unknown>;
  readonly pathWithNamespace: string;
  readonly lists: Map<number, BoardListRow[]>;
  readonly labels: Map<number, LabelRow>;
  readonly milestones: Map<number, MilestoneRow>;
  readonly users: Map<number, UserRow>;
}

/**
 * Entities::List (GitLab 12.10): id, label (LabelBasic), position; EE adds
 * `max_issue_count` and `max_issue_weight` where WIP limits are licensed (0: none set, the
 * API cannot set them in 12.10).
 */
export function toList(row: BoardListRow, label: LabelRow | undefined, plan: Plan) {
  return {
    id: row.id,
    label: label ? toLabelBasic(label) : null,
    position: row.position,
    ...(licensed(plan, 'wip_limits') ? { max_issue_count: 0, max_issue_weight: 0 } : {}),
  };
}

/**
 * Entities::Board (12.10): id, project (BasicProjectDetails), lists (its label lists). EE
 * prepends `name` and `group` (a project's board has none), and on plans with configurable
 * boards (scoped_issue_board) its scope: milestone (Entities::Milestone, or
 * SpecialBoardFilter's `title` for Upcoming and Started), assignee (UserBasic), labels
 * (LabelBasic), weight.
 */
function toBoard(row: BoardRow, ctx: BoardsContext) {
  const { config, plan } = ctx;
  const ce = {
    id: row.id,
    project: ctx.project,
    lists: (ctx.lists.get(row.id) ?? []).map((list) => toList(list, list.label_id === null ? undefined : ctx.labels.get(list.label_id), plan)),
  };
  if (!licensed(plan, 'ee')) return ce;
  const ee = { ...ce, name: row.name, group: null };
  if (!licensed(plan, 'scoped_issue_board')) return ee;
  const milestone = row.milestone_id === null ? undefined : ctx.milestones.get(row.milestone_id);
  const special = row.milestone_id === null ? undefined : SPECIAL_BOARD_MILESTONES[row.milestone_id];
  const assignee = row.assignee_id === null ? undefined : ctx.users.get(row.assignee_id);
  return {
    ...ee,
    milestone: milestone ? toMilestone(milestone, config, ctx.pathWithNamespace) : special ? { title: special } : null,
    assignee: assignee ? toUserBasic(assignee, config) : null,
    labels: row.label_ids.flatMap((id) => {
      const label = ctx.labels.get(id);
      return label ? [toLabelBasic(label)] : [];
    }),
    weight: row.weight,
  };
}

/** The boards of one project as the API shows them, with what they embed read in a few queries. */
export async function presentBoards(db: Db, config: Config, plan: Plan, project: Parameters<typeof presentProjectBasic>[2], rows: readonly BoardRow[]) {
  const lists = await listsOfBoards(
    db,
    rows.map((row) => row.id),
  );
  const labelIds = [...new Set([...[...lists.values()].flat().flatMap((list) => (list.label_id === null ? [] : [list.label_id])), ...rows.flatMap((row) => row.label_ids)])];
  const milestoneIds = [...new Set(rows.flatMap((row) => (row.milestone_id !== null && row.milestone_id > 0 ? [row.milestone_id] : [])))];
  const userIds = [...new Set(rows.flatMap((row) => (row.assignee_id === null ? [] : [row.assignee_id])))];
  const [labels, milestones, users, basic] = await Promise.all([
    labelIds.length === 0 ? [] : db.selectFrom('labels').selectAll().where('id', 'in', labelIds).execute(),
    milestoneIds.length === 0 ? [] : db.selectFrom('milestones').selectAll().where('id', 'in', milestoneIds).where('project_id', '=', project.row.id).execute(),
    userIds.length === 0 ? [] : db.selectFrom('users').selectAll().where('id', 'in', userIds).execute(),
    presentProjectBasic(db, config, project),
  ]);
  const ctx: BoardsContext = {
    config,
    plan,
    project: basic,
    pathWithNamespace: project.row.path_with_namespace,
    lists,
    labels: new Map(labels.map((row) => [row.id, row])),
    milestones: new Map(milestones.map((row) => [row.id, row])),
    users: new Map(users.map((row) => [row.id, row])),
  };
  return rows.map((row) => toBoard(row, ctx));
}

/** The label lists of a board as the API shows them. */
export async function presentLists(db: Db, plan: Plan, rows: readonly BoardListRow[]) {
  const labelIds = [...new Set(rows.flatMap((row) => (row.label_id === null ? [] : [row.label_id])))];
  const labels = labelIds.length === 0 ? [] : await db.selectFrom('labels').selectAll().where('id', 'in', labelIds).execute();
  const byId = new Map(labels.map((row) => [row.id, row]));
  return rows.map((row) => toList(row, row.label_id === null ? undefined : byId.get(row.label_id), plan));
}
