import type { Db } from '../database.js';
import { milestoneClaimRefusal, milestoneClaims, milestoneDecider, milestoneEventIndex, milestoneEvents, milestoneStreamId, type MilestoneCommand, type MilestoneFields } from '../domain/milestones.js';
import type { EventMetadata } from '../eventstore/types.js';
import { defineAggregate } from './aggregate.js';
import { type CommandContext, nextId } from './handler.js';
import { nextIid, type IidCounter } from './iids.js';

/** One milestone of a project (src/domain/milestones.ts). */
export const milestones = defineAggregate({
  name: 'milestones',
  streamId: milestoneStreamId,
  events: milestoneEvents,
  decider: milestoneDecider,
  claims: milestoneClaims,
  claimRefusal: milestoneClaimRefusal,
  index: milestoneEventIndex,
});

/** Milestones' iids, per project; the lock key space is 'mile' as an int. */
const MILESTONE_IIDS: IidCounter = { table: 'milestone_iids', scope: 'project_id', lockSpace: 0x6d696c65 };

/**
 * Milestones::CreateService, with the next iid of the project (nextIid).
 */
export async function createMilestone(ctx: CommandContext, input: { projectId: number; title: string; fields: MilestoneFields }, metadata: EventMetadata): Promise<number> {
  const id = await nextId(ctx.db, 'milestones_id_seq');
  const command = async (trx: Db): Promise<MilestoneCommand> => {
    const iid = await nextIid(trx, MILESTONE_IIDS, input.projectId);
    return { type: 'CreateMilestone', projectId: input.projectId, iid, title: input.title, fields: input.fields };
  };
  await milestones.run(ctx, id, command, metadata);
  return id;
}
