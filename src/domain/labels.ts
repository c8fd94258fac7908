import { z } from 'zod';
import { type Claim, type ClaimChanges, type ClaimRefusal, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import { invalid, recordNotFound } from './errors.js';
import type { EventOf, EventSchemas, FeedIndex } from './events.js';
import { COLOR_NAME_TO_HEX } from './label-colors.js';
import { defineAggregate } from './aggregate.js';

/**
 * Labels of a project (GitLab's `ProjectLabel`): one aggregate per label, stream
 * `label-<id>`. The title is unique within the project (a claim); the project's priority of
 * the label (GitLab's `label_priorities` row) is part of the label here, as a project label
 * belongs to one project. Group labels do not exist here yet.
 */

// ───────────────────────────── Events ─────────────────────────────

const ofLabel = { id: z.int(), project_id: z.int() };

export const labelEvents = {
  LabelCreated: z.strictObject({ ...ofLabel, title: z.string(), color: z.string(), description: z.string().nullable(), priority: z.int().nullable() }),
  LabelUpdated: z.strictObject({
    ...ofLabel,
    /** Only what changed. */
    changes: z.strictObject({ title: z.string().optional(), color: z.string().optional(), description: z.string().nullable().optional(), priority: z.int().nullable().optional() }),
  }),
  LabelDeleted: z.strictObject({ ...ofLabel, title: z.string() }),
} satisfies EventSchemas;

export type LabelEvent = EventOf<typeof labelEvents>;

export const labelStreamId = (id: number) => `label-${id}`;

export const labelEventIndex = (event: LabelEvent): FeedIndex => ({ projectId: event.data.project_id, targetType: 'Label', targetId: event.data.id });

// ───────────────────────────── State ─────────────────────────────

export interface LabelRecord {
  readonly projectId: number;
  readonly title: string;
  readonly color: string;
  readonly description: string | null;
  readonly priority: number | null;
}

export interface LabelState {
  readonly id: number;
  /** null: never created, or deleted. */
  readonly label: LabelRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

/** What a request sets: undefined leaves a field as it is; a null priority removes it. */
export interface LabelFields {
  readonly title?: string | undefined;
  readonly color?: string | undefined;
  readonly description?: string | undefined;
  readonly priority?: number | null | undefined;
}

export type LabelCommand =
  | { readonly type: 'CreateLabel'; readonly projectId: number; readonly fields: LabelFields & { readonly title: string; readonly color: string } }
  | { readonly type: 'UpdateLabel'; readonly fields: LabelFields }
  | { readonly type: 'DeleteLabel' };

// ───────────────────────────── Rules ─────────────────────────────

const TITLE_MAX = 255;
const DESCRIPTION_MAX = 1_048_576;
/** ColorValidator: `#` and three or six hex digits. */
const COLOR_FORMAT = /^#(?:[0-9A-Fa-f]{3}){1,2}$/;

/** Labels::BaseService#convert_color_name_to_hex: a CSS colour keyword becomes its hex code; anything else stays as sent (and is validated). */
export function labelColor(color: string): string {
  const name = color.trim().toLowerCase();
  if (name.startsWith('#')) return color.trim();
  return COLOR_NAME_TO_HEX[name] ?? color.trim();
}

/** LabelsHelper.text_color_for_bg: dark text on a light label, white on a dark one. */
export function labelTextColor(color: string): string {
  const hex = color.slice(1);
  const [r, g, b] = hex.length === 3 ? [...hex].map((d) => parseInt(d + d, 16)) : [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return r! + g! + b! > 500 ? '#333333' : '#FFFFFF';
}

/** Label's validations (GitLab 12), in its order: colour, then title (present, no comma, at most 255 characters). */
function validate(l: { title: string; color: string; description: string | null; priority: number | null }) {
  const fields: Record<string, string[]> = {};
  if (!COLOR_FORMAT.test(l.color)) fields.color = ['must be a valid color code'];
  const titles = [];
  if (l.title === '') titles.push("can't be blank");
  if (!/^[^,]+$/.test(l.title)) titles.push('is invalid');
  if (l.title.length > TITLE_MAX) titles.push(`is too long (maximum is ${TITLE_MAX} characters)`);
  if (titles.length > 0) fields.title = titles;
  if (l.description !== null && l.description.length > DESCRIPTION_MAX) fields.description = [`is too long (maximum is ${DESCRIPTION_MAX} characters)`];
  // LabelPriority: `numericality: { only_integer: true, greater_than_or_equal_to: 0 }` (GitLab raises it as a 500).
  if (l.priority !== null && l.priority < 0) fields.priority = ['must be greater than or equal to 0'];
  if (Object.keys(fields).length > 0) throw invalid(fields);
}

/** Label#description=: a blank description is not written (none). */
const descriptionOf = (text: string | undefined) => (text === undefined ? undefined : text.trim() === '' ? null : text);

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: LabelState, event: LabelEvent): LabelState {
  switch (event.type) {
    case 'LabelCreated': {
      const d = event.data;
      return { ...state, label: { projectId: d.project_id, title: d.title, color: d.color, description: d.description, priority: d.priority } };
    }
    case 'LabelUpdated':
      if (!state.label) return state;
      return { ...state, label: { ...state.label, ...Object.fromEntries(Object.entries(event.data.changes).filter(([, v]) => v !== undefined)) } };
    case 'LabelDeleted':
      return { ...state, label: null };
    default:
      return unhandled(event);
  }
}

function decide(command: LabelCommand, state: LabelState): LabelEvent[] {
  const { id, label } = state;
  if (command.type === 'CreateLabel') {
    // A new id each time: a second create on the stream is a defect of the caller.
    if (label) throw new Error(`label ${id} exists`);
    const { fields } = command;
    const created = { title: fields.title.trim(), color: labelColor(fields.color), description: descriptionOf(fields.description) ?? null, priority: fields.priority ?? null };
    validate(created);
    return [{ type: 'LabelCreated', data: { id, project_id: command.projectId, ...created } }];
  }
  if (!label) throw recordNotFound('Label');
  const ref = { id, project_id: label.projectId };
  switch (command.type) {
    case 'UpdateLabel': {
      const { fields } = command;
      const next = {
        title: fields.title === undefined ? label.title : fields.title.trim(),
        color: fields.color === undefined ? label.color : labelColor(fields.color),
        description: fields.description === undefined ? label.description : descriptionOf(fields.description)!,
        priority: fields.priority === undefined ? label.priority : fields.priority,
      };
      validate(next);
      const changes = Object.fromEntries(Object.entries(next).filter(([key, value]) => value !== label[key as keyof typeof next]));
      return Object.keys(changes).length === 0 ? [] : [{ type: 'LabelUpdated', data: { ...ref, changes } }];
    }
    case 'DeleteLabel':
      return [{ type: 'LabelDeleted', data: { ...ref, title: label.title } }];
    default:
      return unhandled(command);
  }
}

export const labelDecider: Decider<LabelCommand, LabelEvent, LabelState, number> = {
  initialState: (id) => ({ id, label: null }),
  evolve,
  decide,
};

// ───────────────────────────── Claims ─────────────────────────────

/** Label `validates :title, uniqueness: { scope: [:group_id, :project_id] }`. */
const titleClaim = (projectId: number, title: string): Claim => ({ kind: 'label_title', key: `${projectId}/${title}`, conflictMessage: 'Label already exists' });

/** GitLab validates the title on the model: a title taken by a rename is a field error. */
export const labelClaimRefusal: ClaimRefusal = () => invalid({ title: ['has already been taken'] });

export function labelClaims(event: LabelEvent, before: LabelState): ClaimChanges {
  switch (event.type) {
    case 'LabelCreated':
      return { acquire: [titleClaim(event.data.project_id, event.data.title)], release: [] };
    case 'LabelUpdated': {
      const { title } = event.data.changes;
      if (title === undefined || !before.label) return NO_CLAIMS;
      return { acquire: [titleClaim(event.data.project_id, title)], release: [titleClaim(event.data.project_id, before.label.title)] };
    }
    case 'LabelDeleted':
      return before.label ? { acquire: [], release: [titleClaim(event.data.project_id, before.label.title)] } : NO_CLAIMS;
    default:
      return NO_CLAIMS;
  }
}

// ───────────────────────────── The aggregate ─────────────────────────────

/** One label of a project (src/domain/labels.ts). */
export const labels = defineAggregate({
  name: 'labels',
  streamId: labelStreamId,
  events: labelEvents,
  decider: labelDecider,
  claims: labelClaims,
  claimRefusal: labelClaimRefusal,
  index: labelEventIndex,
  idSequence: 'labels_id_seq',
});
