import { sql } from 'kysely';
import type { Db } from '../database.js';
import { milestoneClaimRefusal, milestoneClaims, milestoneDecider, milestoneEventIndex, milestoneEvents, milestoneStreamId, type MilestoneCommand, type MilestoneFields } from '../domain/milestones.js';
import type { EventMetadata } from '../eventstore/types.js';
import { defineAggregate } from './aggregate.js';
import { type CommandContext, nextId } from './handler.js';

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

/** The advisory lock key space of milestone iids ('mile' as an int), one lock per project. */
const IID_LOCK_SPACE = 0x6d696c65;

/**
 * Milestones::CreateService: the next iid of the project (GitLab's InternalId), allocated
 * under a per-project transaction lock so concurrent creations wait for each other, and
 * claimed with the event, so no two milestones of a project ever share one.
 */
export async function createMilestone(ctx: CommandContext, input: { projectId: number; title: string; fields: MilestoneFields }, metadata: EventMetadata): Promise<number> {
  const id = await nextId(ctx.db, 'milestones_id_seq');
  const command = async (trx: Db): Promise<MilestoneCommand> => {
    await sql`select pg_advisory_xact_lock(${IID_LOCK_SPACE}, ${input.projectId})`.execute(trx);
    const last = await trx.selectFrom('milestone_iids').select('last_iid').where('project_id', '=', input.projectId).executeTakeFirst();
    return { type: 'CreateMilestone', projectId: input.projectId, iid: (last?.last_iid ?? 0) + 1, title: input.title, fields: input.fields };
  };
  await milestones.run(ctx, id, command, metadata);
  return id;
}
