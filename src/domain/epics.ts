import { z } from 'zod';
import { type Claim, type ClaimChanges, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import { invalid, recordNotFound } from './errors.js';
import type { EventOf, EventSchemas, FeedIndex } from './events.js';
import { defineAggregate } from './aggregate.js';

/**
 * Epics of a group (GitLab EE's `Epic`, ultimate): one aggregate per epic, stream
 * `epic-<id>`. Its `iid` is allocated per group when it is created (src/commands/epics.ts)
 * and guarded by a claim; its parent is fixed at creation, as GitLab 12's API has no way
 * to change it. Labels are the names on the epic (no label aggregate yet).
 */

// ───────────────────────────── Events ─────────────────────────────

const ofEpic = { id: z.int(), group_id: z.int(), iid: z.int() };
const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const fixedDates = {
  start_date_is_fixed: z.boolean(),
  start_date_fixed: date.nullable(),
  due_date_is_fixed: z.boolean(),
  due_date_fixed: date.nullable(),
};

export const epicEvents = {
  EpicCreated: z.strictObject({
    ...ofEpic,
    parent_id: z.int().nullable(),
    author_id: z.int(),
    title: z.string(),
    description: z.string().nullable(),
    labels: z.array(z.string()),
    ...fixedDates,
  }),
  EpicUpdated: z.strictObject({
    ...ofEpic,
    /** Only what changed. */
    changes: z.strictObject({
      title: z.string().optional(),
      description: z.string().nullable().optional(),
      labels: z.array(z.string()).optional(),
      start_date_is_fixed: z.boolean().optional(),
      start_date_fixed: date.nullable().optional(),
      due_date_is_fixed: z.boolean().optional(),
      due_date_fixed: date.nullable().optional(),
    }),
  }),
  /** The title rides along for the activity feed's target_title. */
  EpicClosed: z.strictObject({ ...ofEpic, title: z.string() }),
  EpicReopened: z.strictObject({ ...ofEpic, title: z.string() }),
  EpicDeleted: z.strictObject(ofEpic),
} satisfies EventSchemas;

export type EpicEvent = EventOf<typeof epicEvents>;

export const epicStreamId = (id: number) => `epic-${id}`;

export const epicEventIndex = (event: EpicEvent): FeedIndex => ({ groupId: event.data.group_id, targetType: 'Epic', targetId: event.data.id });

// ───────────────────────────── State ─────────────────────────────

export type EpicStatus = 'opened' | 'closed';

export interface FixedDates {
  readonly startDateIsFixed: boolean;
  readonly startDateFixed: string | null;
  readonly dueDateIsFixed: boolean;
  readonly dueDateFixed: string | null;
}

export interface EpicRecord extends FixedDates {
  readonly groupId: number;
  readonly iid: number;
  readonly title: string;
  readonly description: string | null;
  readonly labels: readonly string[];
  readonly state: EpicStatus;
}

export interface EpicState {
  readonly id: number;
  /** null: never created, or deleted. */
  readonly epic: EpicRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

/** What the command knows of the parent epic asked for, read in the write transaction; null when there is none. */
export interface ParentFacts {
  readonly id: number;
  /** The parent's group and that group's descendants (GitLab: parent.group.self_and_descendants). */
  readonly groupSubtree: readonly number[];
  /** The parent and its ancestors: how deep the new epic would sit. */
  readonly chainLength: number;
}

export interface EpicFields {
  readonly title?: string | undefined;
  readonly description?: string | null | undefined;
  /** GitLab's comma list, as sent. */
  readonly labels?: string | undefined;
  readonly startDateIsFixed?: boolean | undefined;
  readonly startDateFixed?: string | null | undefined;
  readonly dueDateIsFixed?: boolean | undefined;
  readonly dueDateFixed?: string | null | undefined;
}

export type EpicCommand =
  | {
      readonly type: 'CreateEpic';
      readonly groupId: number;
      readonly iid: number;
      readonly authorId: number;
      readonly title: string;
      /** `parent_id` as sent (undefined: none), and what was found of it (null: no such epic). */
      readonly parentId?: number | undefined;
      readonly parent?: ParentFacts | null | undefined;
      readonly fields: EpicFields;
    }
  | { readonly type: 'UpdateEpic'; readonly fields: EpicFields; readonly stateEvent?: 'close' | 'reopen' | undefined }
  | { readonly type: 'DeleteEpic' };

// ───────────────────────────── Rules ─────────────────────────────

/** Epic::MAX_HIERARCHY_DEPTH (GitLab 12). */
export const MAX_HIERARCHY_DEPTH = 5;
const TITLE_MAX = 255;
/** Issuable: `validates :description, length: { maximum: 1.megabyte }` — characters. */
export const DESCRIPTION_MAX = 1_048_576;

/** GitLab's labels parameter: a comma list; names trimmed, blanks dropped, each once, sorted by title as the entity shows them. */
export function labelList(text: string): string[] {
  return [...new Set(text.split(',').map((name) => name.trim()).filter((name) => name !== ''))].sort();
}

function validate(title: string, description: string | null) {
  const fields: Record<string, string[]> = {};
  const titles = [];
  if (title.trim() === '') titles.push("can't be blank");
  if (title.length > TITLE_MAX) titles.push(`is too long (maximum is ${TITLE_MAX} characters)`);
  if (titles.length > 0) fields.title = titles;
  if (description !== null && description.length > DESCRIPTION_MAX) fields.description = [`is too long (maximum is ${DESCRIPTION_MAX} characters)`];
  if (Object.keys(fields).length > 0) throw invalid(fields);
}

/**
 * Epic#valid_parent? (GitLab 12): the parent exists, its group is the epic's group or one of
 * its ancestors (the epic's group is in the parent group's subtree), and the hierarchy stays
 * under MAX_HIERARCHY_DEPTH (`max_descendants_depth + parent.base_and_ancestors.count >= 5`
 * refuses; a new epic's own depth is 1).
 */
function checkParent(groupId: number, parent: ParentFacts | null) {
  const valid = parent !== null && parent.groupSubtree.includes(groupId) && 1 + parent.chainLength < MAX_HIERARCHY_DEPTH;
  if (!valid) throw invalid({ parent: ['The parent is not valid'] });
}

/**
 * The inherited dates of an epic (GitLab's Epics::UpdateDatesService): the earliest start
 * and the latest due date among its sources — its child epics' (composite) dates today, and
 * the milestones of its issues once issues and milestones exist (they are one more list of
 * sources here).
 */
export interface DateSource {
  readonly startDate: string | null;
  readonly dueDate: string | null;
}

export function inheritedDates(children: readonly DateSource[], milestones: readonly DateSource[] = []): DateSource {
  const sources = [...children, ...milestones];
  const starts = sources.map((s) => s.startDate).filter((d): d is string => d !== null);
  const dues = sources.map((s) => s.dueDate).filter((d): d is string => d !== null);
  return { startDate: starts.length ? starts.reduce((a, b) => (a < b ? a : b)) : null, dueDate: dues.length ? dues.reduce((a, b) => (a > b ? a : b)) : null };
}

/** The composite dates an epic shows: the fixed one when fixed, the inherited one otherwise. */
export function compositeDates(fixed: FixedDates, inherited: DateSource): DateSource {
  return {
    startDate: fixed.startDateIsFixed ? fixed.startDateFixed : inherited.startDate,
    dueDate: fixed.dueDateIsFixed ? fixed.dueDateFixed : inherited.dueDate,
  };
}

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: EpicState, event: EpicEvent): EpicState {
  switch (event.type) {
    case 'EpicCreated': {
      const d = event.data;
      return {
        ...state,
        epic: {
          groupId: d.group_id,
          iid: d.iid,
          title: d.title,
          description: d.description,
          labels: d.labels,
          state: 'opened',
          startDateIsFixed: d.start_date_is_fixed,
          startDateFixed: d.start_date_fixed,
          dueDateIsFixed: d.due_date_is_fixed,
          dueDateFixed: d.due_date_fixed,
        },
      };
    }
    case 'EpicUpdated': {
      if (!state.epic) return state;
      const c = event.data.changes;
      return {
        ...state,
        epic: {
          ...state.epic,
          ...(c.title !== undefined ? { title: c.title } : {}),
          ...(c.description !== undefined ? { description: c.description } : {}),
          ...(c.labels !== undefined ? { labels: c.labels } : {}),
          ...(c.start_date_is_fixed !== undefined ? { startDateIsFixed: c.start_date_is_fixed } : {}),
          ...(c.start_date_fixed !== undefined ? { startDateFixed: c.start_date_fixed } : {}),
          ...(c.due_date_is_fixed !== undefined ? { dueDateIsFixed: c.due_date_is_fixed } : {}),
          ...(c.due_date_fixed !== undefined ? { dueDateFixed: c.due_date_fixed } : {}),
        },
      };
    }
    case 'EpicClosed':
      return state.epic ? { ...state, epic: { ...state.epic, state: 'closed' } } : state;
    case 'EpicReopened':
      return state.epic ? { ...state, epic: { ...state.epic, state: 'opened' } } : state;
    case 'EpicDeleted':
      return { ...state, epic: null };
    default:
      return unhandled(event);
  }
}

function changesOf(epic: EpicRecord, fields: EpicFields) {
  const labels = fields.labels === undefined ? undefined : labelList(fields.labels);
  const changed = <T>(next: T | undefined, current: T) => next !== undefined && next !== current;
  return {
    ...(changed(fields.title, epic.title) ? { title: fields.title! } : {}),
    ...(changed(fields.description, epic.description) ? { description: fields.description! } : {}),
    ...(labels !== undefined && labels.join(',') !== epic.labels.join(',') ? { labels } : {}),
    ...(changed(fields.startDateIsFixed, epic.startDateIsFixed) ? { start_date_is_fixed: fields.startDateIsFixed! } : {}),
    ...(changed(fields.startDateFixed, epic.startDateFixed) ? { start_date_fixed: fields.startDateFixed! } : {}),
    ...(changed(fields.dueDateIsFixed, epic.dueDateIsFixed) ? { due_date_is_fixed: fields.dueDateIsFixed! } : {}),
    ...(changed(fields.dueDateFixed, epic.dueDateFixed) ? { due_date_fixed: fields.dueDateFixed! } : {}),
  };
}

function decide(command: EpicCommand, state: EpicState): EpicEvent[] {
  const { id, epic } = state;
  if (command.type === 'CreateEpic') {
    // A new id each time: a second create on the stream is a defect of the caller.
    if (epic) throw new Error(`epic ${id} exists`);
    const { fields } = command;
    const description = fields.description ?? null;
    validate(command.title, description);
    if (command.parentId !== undefined) checkParent(command.groupId, command.parent ?? null);
    return [
      {
        type: 'EpicCreated',
        data: {
          id,
          group_id: command.groupId,
          iid: command.iid,
          parent_id: command.parentId ?? null,
          author_id: command.authorId,
          title: command.title,
          description,
          labels: labelList(fields.labels ?? ''),
          start_date_is_fixed: fields.startDateIsFixed ?? false,
          start_date_fixed: fields.startDateFixed ?? null,
          due_date_is_fixed: fields.dueDateIsFixed ?? false,
          due_date_fixed: fields.dueDateFixed ?? null,
        },
      },
    ];
  }
  if (!epic) throw recordNotFound('Epic');
  const ref = { id, group_id: epic.groupId, iid: epic.iid };
  switch (command.type) {
    case 'UpdateEpic': {
      const changes = changesOf(epic, command.fields);
      validate(changes.title ?? epic.title, changes.description === undefined ? epic.description : changes.description);
      const title = changes.title ?? epic.title;
      const events: EpicEvent[] = Object.keys(changes).length > 0 ? [{ type: 'EpicUpdated', data: { ...ref, changes } }] : [];
      // Epics::CloseService / ReopenService: nothing happens to an epic already in that state.
      if (command.stateEvent === 'close' && epic.state === 'opened') events.push({ type: 'EpicClosed', data: { ...ref, title } });
      if (command.stateEvent === 'reopen' && epic.state === 'closed') events.push({ type: 'EpicReopened', data: { ...ref, title } });
      return events;
    }
    case 'DeleteEpic':
      return [{ type: 'EpicDeleted', data: ref }];
    default:
      return unhandled(command);
  }
}

export const epicDecider: Decider<EpicCommand, EpicEvent, EpicState, number> = {
  initialState: (id) => ({ id, epic: null }),
  evolve,
  decide,
};

// ───────────────────────────── Claims ─────────────────────────────

/** An iid is its group's once, for good: GitLab's InternalId never hands one out twice, deleted epics included. */
export const epicIidClaim = (groupId: number, iid: number): Claim => ({ kind: 'epic_iid', key: `${groupId}/${iid}`, conflictMessage: 'Epic iid has already been taken' });

export function epicClaims(event: EpicEvent): ClaimChanges {
  return event.type === 'EpicCreated' ? { acquire: [epicIidClaim(event.data.group_id, event.data.iid)], release: [] } : NO_CLAIMS;
}

// ───────────────────────────── The aggregate ─────────────────────────────

/** One epic of a group (src/domain/epics.ts). */
export const epics = defineAggregate({
  name: 'epics',
  streamId: epicStreamId,
  events: epicEvents,
  decider: epicDecider,
  claims: epicClaims,
  index: epicEventIndex,
  idSequence: 'epics_id_seq',
});
