import type { Db } from '../database/database.js';
import { type MilestoneCommand, type MilestoneFields, milestones } from '../domain/milestones.js';
import { nextId } from './kernel/handler.js';
import { nextIid, type IidCounter } from './kernel/iids.js';
import { run } from './kernel/run.js';
import type { Writer } from './kernel/context.js';


/** Milestones' iids, per project; the lock key space is 'mile' as an int. */
const MILESTONE_IIDS: IidCounter = { table: 'milestone_iids', scope: 'project_id', lockSpace: 0x6d696c65 };

/**
 * Milestones::CreateService, with the next iid of the project (nextIid).
 */
export async function createMilestone(w: Writer, input: { projectId: number; title: string; fields: MilestoneFields }): Promise<number> {
  const id = await nextId(w.ctx.db, 'milestones_id_seq');
  const command = async (trx: Db): Promise<MilestoneCommand> => {
    const iid = await nextIid(trx, MILESTONE_IIDS, input.projectId);
    return { type: 'CreateMilestone', projectId: input.projectId, iid, title: input.title, fields: input.fields };
  };
  await run(w, milestones, id, command);
  return id;
}
