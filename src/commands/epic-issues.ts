import type { Db } from '../database/database.js';
import { positionAtStart, positionBetweenLinks, spread, type PlacedLink } from '../domain/epic-issues.js';
import type { EpicPlacement } from '../domain/issues/decider.js';
import { issues } from '../domain/issues/aggregate.js';
import { recordNotFound } from '../domain/errors.js';
import { handleCommands, nextId } from './kernel/handler.js';
import { run, spec } from './kernel/run.js';
import type { Writer } from './kernel/context.js';

/**
 * EE's EpicIssues services (GitLab 12.10) over the issues' streams: an issue's epic and its
 * place are events of the issue (src/domain/issues/). Positions are decided in the write
 * transaction from the epic's links, its `epics` row locked so that two placements in one
 * epic take turns.
 */

/** A new link id, from epic_issues_id_seq. */
export const newEpicIssueId = (w: Writer) => (w.ctx.ids ? w.ctx.ids.next(w.ctx.db, 'epic_issues_id_seq') : nextId(w.ctx.db, 'epic_issues_id_seq'));

/** The epic's links in the list's order (relative_position, then id). */
export async function epicLinks(db: Db, epicId: number): Promise<PlacedLink[]> {
  const rows = await db.selectFrom('epic_issues').select(['id', 'issue_id', 'relative_position']).where('epic_id', '=', epicId).orderBy('relative_position').orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, issueId: r.issue_id, position: r.relative_position ?? 0 }));
}

/** The same, the epic's row locked first: placements in one epic take turns. */
async function epicLinksLocked(trx: Db, epicId: number): Promise<PlacedLink[]> {
  await trx.selectFrom('epics').select('id').where('id', '=', epicId).forUpdate().executeTakeFirst();
  return epicLinks(trx, epicId);
}

/** The place a new issue takes in an epic (`link.move_to_start`), read in the write transaction. */
export function placementAtStart(epic: { id: number; group_id: number }, newLinkId: number): (trx: Db) => Promise<EpicPlacement> {
  return async (trx) => ({ epicId: epic.id, epicGroupId: epic.group_id, newLinkId, relativePosition: positionAtStart(await epicLinksLocked(trx, epic.id)) });
}

/** EpicIssues::CreateService for one issue: into the epic, first; from another epic it moves. */
export async function addIssueToEpic(w: Writer, issueId: number, epic: { id: number; group_id: number }): Promise<void> {
  const newLinkId = await newEpicIssueId(w);
  await run(w, issues, issueId, async (trx) => ({ type: 'AddIssueToEpic', ...(await placementAtStart(epic, newLinkId)(trx)) }));
}

/** EpicIssues::DestroyService. */
export async function removeIssueFromEpic(w: Writer, issueId: number, epicId: number): Promise<void> {
  await run(w, issues, issueId, { type: 'RemoveIssueFromEpic', epicId });
}

/**
 * EpicIssues::UpdateService: the link between the links `move_before_id` (above it) and
 * `move_after_id` (below it), either alone naming one neighbour; neither moves nothing. Ids not
 * of the epic's links are "404 Not found". Where no integer is left between the neighbours,
 * the epic's links are spread out first; each link that moves is an event on its issue's
 * stream, all committed together.
 */
export async function moveIssueInEpic(w: Writer, epicId: number, linkId: number, moves: { before?: number | undefined; after?: number | undefined }): Promise<void> {
  const links = await epicLinks(w.ctx.db, epicId);
  const find = (placed: readonly PlacedLink[], id: number | undefined) => {
    if (id === undefined) return undefined;
    const found = placed.find((l) => l.id === id);
    if (!found) throw recordNotFound();
    return found;
  };
  find(links, linkId);
  const [before, after] = [find(links, moves.before), find(links, moves.after)];
  if (!before && !after) return;
  let placed: readonly PlacedLink[] = links;
  let position = positionBetweenLinks(placed, before, after);
  if (position === null) {
    placed = spread(links);
    position = positionBetweenLinks(placed, find(placed, moves.before), find(placed, moves.after))!;
  }
  const target = position;
  const moved = placed.map((l) => (l.id === linkId ? { ...l, position: target } : l)).filter((l, i) => l.position !== links[i]!.position);
  if (moved.length === 0) return;
  await handleCommands(
    w,
    moved.map((l) => spec(issues, l.issueId, { type: 'ChangeEpicPosition', epicId, relativePosition: l.position })),
  );
}

/** Every issue of the epics given leaves them (their deletion): the issues' events, to commit with the epics'. */
export async function unlinkSpecs(db: Db, epicIds: readonly number[]) {
  if (epicIds.length === 0) return [];
  const rows = await db.selectFrom('epic_issues').select(['issue_id', 'epic_id']).where('epic_id', 'in', [...epicIds]).orderBy('issue_id').execute();
  return rows.map((r) => spec(issues, r.issue_id, { type: 'RemoveIssueFromEpic', epicId: r.epic_id }));
}
