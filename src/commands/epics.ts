import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { type EpicCommand, type EpicFields, type ParentFacts, epics } from '../domain/epics.js';
import { unlinkSpecs } from './epic-issues.js';
import { handleCommands, nextId } from './kernel/handler.js';
import { nextIid, type IidCounter } from './kernel/iids.js';
import { run, spec } from './kernel/run.js';
import type { Writer } from './kernel/context.js';


/** Epics' iids, per group; the lock key space is 'epic' as an int. */
const EPIC_IIDS: IidCounter = { table: 'epic_iids', scope: 'group_id', lockSpace: 0x65706963 };

/** Epic#valid_parent?'s facts about the parent epic asked for, read in the write transaction. */
async function parentFacts(trx: Db, parentId: number): Promise<ParentFacts | null> {
  const parent = await trx.selectFrom('epics').select(['id', 'group_id']).where('id', '=', parentId).forShare().executeTakeFirst();
  if (!parent) return null;
  const { rows: subtree } = await sql<{ id: number }>`select id from namespaces where traversal_ids && array[${parent.group_id}]::integer[]`.execute(trx);
  const { rows: chain } = await sql<{ n: string }>`
    with recursive chain(id, parent_id) as (
      select id, parent_id from epics where id = ${parentId}
      union all select e.id, e.parent_id from epics e join chain c on e.id = c.parent_id
    ) select count(*) as n from chain`.execute(trx);
  return { id: parent.id, groupSubtree: subtree.map((r) => r.id), chainLength: Number(chain[0]!.n) };
}

/**
 * Epics::CreateService, with the next iid of the group (nextIid).
 */
export async function createEpic(
  w: Writer,
  input: { groupId: number; authorId: number; title: string; parentId?: number | undefined; fields: EpicFields },
): Promise<number> {
  const id = await nextId(w.ctx.db, 'epics_id_seq');
  const command = async (trx: Db): Promise<EpicCommand> => {
    const iid = await nextIid(trx, EPIC_IIDS, input.groupId);
    const parent = input.parentId === undefined ? undefined : await parentFacts(trx, input.parentId);
    return { type: 'CreateEpic', groupId: input.groupId, iid, authorId: input.authorId, title: input.title, parentId: input.parentId, parent, fields: input.fields };
  };
  await run(w, epics, id, command);
  return id;
}

/**
 * Issuable::DestroyService: the epic and, as GitLab 12's `epics.parent_id` foreign key
 * (on delete cascade) does, every epic below it — each stream gets its deletion, all in one
 * transaction, with their issues leaving them.
 */
export async function deleteEpic(w: Writer, epicId: number): Promise<void> {
  const { rows } = await sql<{ id: number }>`
    with recursive tree(id) as (
      select id from epics where id = ${epicId}
      union all select e.id from epics e join tree t on e.parent_id = t.id
    ) select id from tree`.execute(w.ctx.db);
  const ids = rows.map((r) => r.id).sort((a, b) => b - a);
  if (ids.length === 0) return;
  // EpicIssue's `on delete cascade`: the epics' issues leave them, as events of the issues.
  await handleCommands(w, [...(await unlinkSpecs(w.ctx.db, ids)), ...ids.map((id) => spec(epics, id, { type: 'DeleteEpic' }))]);
}
