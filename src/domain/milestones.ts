import { z } from 'zod';
import { type Claim, type ClaimChanges, type ClaimRefusal, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import { conflict, invalid, recordNotFound } from './errors.js';
import type { EventOf, EventSchemas, FeedIndex } from './events.js';
import { defineAggregate } from './aggregate.js';

/**
 * Milestones of a project (GitLab's `Milestone` with a project): one aggregate per
 * milestone, stream `milestone-<id>`. Its `iid` is allocated per project when it is created
 * (src/commands/milestones.ts) and guarded by a claim; its title is unique within the
 * project (a claim too). Group milestones do not exist here yet.
 */

// ───────────────────────────── Events ─────────────────────────────

const ofMilestone = { id: z.int(), project_id: z.int(), iid: z.int() };
const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

export const milestoneEvents = {
  MilestoneCreated: z.strictObject({ ...ofMilestone, title: z.string(), description: z.string().nullable(), start_date: date.nullable(), due_date: date.nullable() }),
  MilestoneUpdated: z.strictObject({
    ...ofMilestone,
    /** Only what changed. */
    changes: z.strictObject({
      title: z.string().optional(),
      description: z.string().nullable().optional(),
      start_date: date.nullable().optional(),
      due_date: date.nullable().optional(),
    }),
  }),
  /** The title rides along for the activity feed's target_title. */
  MilestoneClosed: z.strictObject({ ...ofMilestone, title: z.string() }),
  MilestoneReopened: z.strictObject({ ...ofMilestone, title: z.string() }),
  MilestoneDeleted: z.strictObject({ ...ofMilestone, title: z.string() }),
} satisfies EventSchemas;

export type MilestoneEvent = EventOf<typeof milestoneEvents>;

export const milestoneStreamId = (id: number) => `milestone-${id}`;

export const milestoneEventIndex = (event: MilestoneEvent): FeedIndex => ({ projectId: event.data.project_id, targetType: 'Milestone', targetId: event.data.id });

// ───────────────────────────── State ─────────────────────────────

/** GitLab's milestone state machine: `active` and `closed`. */
export type MilestoneStatus = 'active' | 'closed';

export interface MilestoneRecord {
  readonly projectId: number;
  readonly iid: number;
  readonly title: string;
  readonly description: string | null;
  readonly startDate: string | null;
  readonly dueDate: string | null;
  readonly state: MilestoneStatus;
}

export interface MilestoneState {
  readonly id: number;
  /** null: never created, or deleted. */
  readonly milestone: MilestoneRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

/** What a request sets: undefined leaves a field as it is; a date is 'YYYY-MM-DD' or null (none). */
export interface MilestoneFields {
  readonly title?: string | undefined;
  readonly description?: string | null | undefined;
  readonly startDate?: string | null | undefined;
  readonly dueDate?: string | null | undefined;
}

export type MilestoneCommand =
  | { readonly type: 'CreateMilestone'; readonly projectId: number; readonly iid: number; readonly title: string; readonly fields: MilestoneFields }
  | { readonly type: 'UpdateMilestone'; readonly fields: MilestoneFields; readonly stateEvent?: 'close' | 'activate' | undefined }
  | { readonly type: 'DeleteMilestone' };

// ───────────────────────────── Rules ─────────────────────────────

/** The column is a varchar(255) in GitLab; forgelog says so instead of failing. */
const TITLE_MAX = 255;
/** Milestone `validates :description, length: { maximum: Gitlab::Database::MAX_TEXT_SIZE_LIMIT }`-like bound: characters. */
export const DESCRIPTION_MAX = 1_048_576;

/**
 * Milestone's validations (GitLab 12): title present (stripped first, `strip_attributes`),
 * `start_date_should_be_less_than_due_date` (a due date on or before the start date is
 * refused on due_date).
 */
function validate(m: { title: string; description: string | null; startDate: string | null; dueDate: string | null }) {
  const fields: Record<string, string[]> = {};
  const titles = [];
  if (m.title === '') titles.push("can't be blank");
  if (m.title.length > TITLE_MAX) titles.push(`is too long (maximum is ${TITLE_MAX} characters)`);
  if (titles.length > 0) fields.title = titles;
  if (m.description !== null && m.description.length > DESCRIPTION_MAX) fields.description = [`is too long (maximum is ${DESCRIPTION_MAX} characters)`];
  if (m.startDate !== null && m.dueDate !== null && m.dueDate <= m.startDate) fields.due_date = ['must be greater than start date'];
  if (Object.keys(fields).length > 0) throw invalid(fields);
}

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: MilestoneState, event: MilestoneEvent): MilestoneState {
  switch (event.type) {
    case 'MilestoneCreated': {
      const d = event.data;
      return { ...state, milestone: { projectId: d.project_id, iid: d.iid, title: d.title, description: d.description, startDate: d.start_date, dueDate: d.due_date, state: 'active' } };
    }
    case 'MilestoneUpdated': {
      if (!state.milestone) return state;
      const c = event.data.changes;
      return {
        ...state,
        milestone: {
          ...state.milestone,
          ...(c.title !== undefined ? { title: c.title } : {}),
          ...(c.description !== undefined ? { description: c.description } : {}),
          ...(c.start_date !== undefined ? { startDate: c.start_date } : {}),
          ...(c.due_date !== undefined ? { dueDate: c.due_date } : {}),
        },
      };
    }
    case 'MilestoneClosed':
      return state.milestone ? { ...state, milestone: { ...state.milestone, state: 'closed' } } : state;
    case 'MilestoneReopened':
      return state.milestone ? { ...state, milestone: { ...state.milestone, state: 'active' } } : state;
    case 'MilestoneDeleted':
      return { ...state, milestone: null };
    default:
      return unhandled(event);
  }
}

function changesOf(milestone: MilestoneRecord, fields: MilestoneFields) {
  const title = fields.title?.trim();
  const changed = <T>(next: T | undefined, current: T) => next !== undefined && next !== current;
  return {
    ...(changed(title, milestone.title) ? { title: title! } : {}),
    ...(changed(fields.description, milestone.description) ? { description: fields.description! } : {}),
    ...(changed(fields.startDate, milestone.startDate) ? { start_date: fields.startDate! } : {}),
    ...(changed(fields.dueDate, milestone.dueDate) ? { due_date: fields.dueDate! } : {}),
  };
}

function decide(command: MilestoneCommand, state: MilestoneState): MilestoneEvent[] {
  const { id, milestone } = state;
  if (command.type === 'CreateMilestone') {
    // A new id each time: a second create on the stream is a defect of the caller.
    if (milestone) throw new Error(`milestone ${id} exists`);
    const { fields } = command;
    const created = { title: command.title.trim(), description: fields.description ?? null, startDate: fields.startDate ?? null, dueDate: fields.dueDate ?? null };
    validate(created);
    return [
      {
        type: 'MilestoneCreated',
        data: { id, project_id: command.projectId, iid: command.iid, title: created.title, description: created.description, start_date: created.startDate, due_date: created.dueDate },
      },
    ];
  }
  if (!milestone) throw recordNotFound('Milestone');
  const ref = { id, project_id: milestone.projectId, iid: milestone.iid };
  switch (command.type) {
    case 'UpdateMilestone': {
      const changes = changesOf(milestone, command.fields);
      const title = changes.title ?? milestone.title;
      validate({
        title,
        description: changes.description === undefined ? milestone.description : changes.description,
        startDate: changes.start_date === undefined ? milestone.startDate : changes.start_date,
        dueDate: changes.due_date === undefined ? milestone.dueDate : changes.due_date,
      });
      const events: MilestoneEvent[] = Object.keys(changes).length > 0 ? [{ type: 'MilestoneUpdated', data: { ...ref, changes } }] : [];
      // Milestones::CloseService / ReopenService: the state machine refuses a transition to the state it is in, and records nothing.
      if (command.stateEvent === 'close' && milestone.state === 'active') events.push({ type: 'MilestoneClosed', data: { ...ref, title } });
      if (command.stateEvent === 'activate' && milestone.state === 'closed') events.push({ type: 'MilestoneReopened', data: { ...ref, title } });
      return events;
    }
    case 'DeleteMilestone':
      return [{ type: 'MilestoneDeleted', data: { ...ref, title: milestone.title } }];
    default:
      return unhandled(command);
  }
}

export const milestoneDecider: Decider<MilestoneCommand, MilestoneEvent, MilestoneState, number> = {
  initialState: (id) => ({ id, milestone: null }),
  evolve,
  decide,
};

// ───────────────────────────── Claims ─────────────────────────────

/** An iid is its project's once, for good: GitLab's InternalId never hands one out twice, deleted milestones included. */
export const milestoneIidClaim = (projectId: number, iid: number): Claim => ({ kind: 'milestone_iid', key: `${projectId}/${iid}`, conflictMessage: 'Milestone iid has already been taken' });
/** Milestone#uniqueness_of_title: the title within the project (and its group's milestones, which do not exist here). */
const titleClaim = (projectId: number, title: string): Claim => ({ kind: 'milestone_title', key: `${projectId}/${title}`, conflictMessage: 'Milestone title has already been taken' });

/** GitLab validates the title on the model: a taken one is a field error. */
export const milestoneClaimRefusal: ClaimRefusal = (claim) =>
  claim.kind === 'milestone_title' ? invalid({ title: ['already being used for another group or project milestone.'] }) : conflict(claim.conflictMessage);

export function milestoneClaims(event: MilestoneEvent, before: MilestoneState): ClaimChanges {
  switch (event.type) {
    case 'MilestoneCreated':
      return { acquire: [milestoneIidClaim(event.data.project_id, event.data.iid), titleClaim(event.data.project_id, event.data.title)], release: [] };
    case 'MilestoneUpdated': {
      const { title } = event.data.changes;
      if (title === undefined || !before.milestone) return NO_CLAIMS;
      return { acquire: [titleClaim(event.data.project_id, title)], release: [titleClaim(event.data.project_id, before.milestone.title)] };
    }
    case 'MilestoneDeleted':
      return before.milestone ? { acquire: [], release: [titleClaim(event.data.project_id, before.milestone.title)] } : NO_CLAIMS;
    default:
      return NO_CLAIMS;
  }
}

// ───────────────────────────── The aggregate ─────────────────────────────

/** One milestone of a project (src/domain/milestones.ts). */
export const milestones = defineAggregate({
  name: 'milestones',
  streamId: milestoneStreamId,
  events: milestoneEvents,
  decider: milestoneDecider,
  claims: milestoneClaims,
  claimRefusal: milestoneClaimRefusal,
  index: milestoneEventIndex,
  idSequence: 'milestones_id_seq',
});
