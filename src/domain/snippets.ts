import { z } from 'zod';
import { type Decider, unhandled } from './decider.js';
import { invalid, notFound } from './errors.js';
import type { EventOf, EventSchemas, FeedIndex } from './events.js';
import { defineAggregate } from './aggregate.js';
import { restrictedVisibilityError, VISIBILITIES, type Visibility } from './access.js';

/**
 * Snippets (GitLab's Snippet, PersonalSnippet and ProjectSnippet): one aggregate per snippet,
 * stream `snippet-<id>`. A personal snippet has no project; a project snippet belongs to one.
 * The content is the snippet's one file, kept in the log as GitLab 12 keeps it in its row.
 */

// ───────────────────────────── Events ─────────────────────────────

const visibility = z.enum(VISIBILITIES);
const ofSnippet = { id: z.int(), project_id: z.int().nullable() };

export const snippetEvents = {
  SnippetCreated: z.strictObject({
    ...ofSnippet,
    author_id: z.int(),
    title: z.string(),
    file_name: z.string(),
    content: z.string(),
    description: z.string().nullable(),
    visibility,
  }),
  SnippetUpdated: z.strictObject({
    ...ofSnippet,
    changes: z.strictObject({
      title: z.string().optional(),
      file_name: z.string().optional(),
      content: z.string().optional(),
      description: z.string().nullable().optional(),
      visibility: visibility.optional(),
    }),
  }),
  SnippetDeleted: z.strictObject(ofSnippet),
} satisfies EventSchemas;

export type SnippetEvent = EventOf<typeof snippetEvents>;

export const snippetStreamId = (id: number) => `snippet-${id}`;

export const snippetEventIndex = (event: SnippetEvent): FeedIndex => ({
  projectId: event.data.project_id,
  targetType: 'Snippet',
  targetId: event.data.id,
});

// ───────────────────────────── State ─────────────────────────────

export interface SnippetRecord {
  readonly projectId: number | null;
  readonly authorId: number;
  readonly title: string;
  readonly fileName: string;
  readonly content: string;
  readonly description: string | null;
  readonly visibility: Visibility;
}

export interface SnippetState {
  readonly id: number;
  /** null: never created, or deleted. */
  readonly snippet: SnippetRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

/** What the instance's settings and the caller bring to a decision (read before it). */
export interface SnippetLimits {
  /** Application setting restricted_visibility_levels. */
  readonly restrictedVisibility: readonly unknown[];
  readonly isAdmin: boolean;
  /** Application setting snippet_size_limit, in bytes. */
  readonly sizeLimit: number;
}

export interface SnippetFields {
  readonly title?: string | undefined;
  readonly fileName?: string | undefined;
  readonly content?: string | undefined;
  readonly description?: string | null | undefined;
  readonly visibility?: Visibility | undefined;
}

export type SnippetCommand =
  | ({ readonly type: 'CreateSnippet'; readonly projectId: number | null; readonly authorId: number } & Required<SnippetFields> & SnippetLimits)
  | ({ readonly type: 'UpdateSnippet' } & SnippetFields & SnippetLimits)
  | { readonly type: 'DeleteSnippet' };

// ───────────────────────────── Rules ─────────────────────────────

const MAX_LENGTH = 255;
const UNITS = ['KB', 'MB', 'GB', 'TB'];

/** ActiveSupport's number_to_human_size: 1024-based, three significant digits, no trailing zeros. */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'Byte' : 'Bytes'}`;
  // Rails keeps the unit of the logarithm even where rounding reaches the next one (1048575 is "1020 KB").
  const exponent = Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), UNITS.length);
  return `${Number((bytes / 1024 ** exponent).toPrecision(3))} ${UNITS[exponent - 1]}`;
}

/**
 * Snippet's validations (12.10), in the model's order: title present and at most 255
 * characters, file_name at most 255, content present and within snippet_size_limit
 * (BytesizeValidator, only when the content changes).
 */
function validate(record: SnippetRecord, contentChanged: boolean, sizeLimit: number) {
  const fields: Record<string, string[]> = {};
  const add = (field: string, message: string) => (fields[field] ??= []).push(message);
  if (record.title.trim() === '') add('title', "can't be blank");
  if (record.title.length > MAX_LENGTH) add('title', `is too long (maximum is ${MAX_LENGTH} characters)`);
  if (record.fileName.length > MAX_LENGTH) add('file_name', `is too long (maximum is ${MAX_LENGTH} characters)`);
  if (record.content.trim() === '') add('content', "can't be blank");
  const size = Buffer.byteLength(record.content);
  if (contentChanged && size > sizeLimit) add('content', `is too long (${humanSize(size)}). The maximum size is ${humanSize(sizeLimit)}.`);
  if (Object.keys(fields).length > 0) throw invalid(fields);
}

/** Gitlab::VisibilityLevel.allowed_for? — the services refuse before validating (a 403 on the wire). */
function checkVisibility(level: Visibility, limits: SnippetLimits) {
  const refusal = restrictedVisibilityError(level, limits.restrictedVisibility, limits.isAdmin);
  if (refusal) throw refusal;
}

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: SnippetState, event: SnippetEvent): SnippetState {
  switch (event.type) {
    case 'SnippetCreated': {
      const d = event.data;
      return {
        ...state,
        snippet: { projectId: d.project_id, authorId: d.author_id, title: d.title, fileName: d.file_name, content: d.content, description: d.description, visibility: d.visibility },
      };
    }
    case 'SnippetUpdated': {
      if (!state.snippet) return state;
      const { title, file_name, content, description, visibility } = event.data.changes;
      const s = state.snippet;
      return {
        ...state,
        snippet: {
          ...s,
          title: title ?? s.title,
          fileName: file_name ?? s.fileName,
          content: content ?? s.content,
          description: description !== undefined ? description : s.description,
          visibility: visibility ?? s.visibility,
        },
      };
    }
    case 'SnippetDeleted':
      return { ...state, snippet: null };
    default:
      return state;
  }
}

function decide(command: SnippetCommand, state: SnippetState): SnippetEvent[] {
  const { id, snippet } = state;
  if (command.type === 'CreateSnippet') {
    // A new id each time: a second create on the stream is a defect of the caller.
    if (snippet) throw new Error(`snippet ${id} exists`);
    checkVisibility(command.visibility, command);
    const record: SnippetRecord = {
      projectId: command.projectId,
      authorId: command.authorId,
      title: command.title,
      fileName: command.fileName,
      content: command.content,
      description: command.description,
      visibility: command.visibility,
    };
    validate(record, true, command.sizeLimit);
    const { projectId, authorId, fileName, ...rest } = record;
    return [{ type: 'SnippetCreated', data: { id, project_id: projectId, author_id: authorId, file_name: fileName, ...rest } }];
  }
  if (!snippet) throw notFound('Snippet');
  const ref = { id, project_id: snippet.projectId };
  switch (command.type) {
    case 'UpdateSnippet': {
      // Snippets::UpdateService: a visibility change the instance restricts is refused first.
      if (command.visibility !== undefined && command.visibility !== snippet.visibility) checkVisibility(command.visibility, command);
      const changes = {
        ...(command.title !== undefined && command.title !== snippet.title ? { title: command.title } : {}),
        ...(command.fileName !== undefined && command.fileName !== snippet.fileName ? { file_name: command.fileName } : {}),
        ...(command.content !== undefined && command.content !== snippet.content ? { content: command.content } : {}),
        ...(command.description !== undefined && command.description !== snippet.description ? { description: command.description } : {}),
        ...(command.visibility !== undefined && command.visibility !== snippet.visibility ? { visibility: command.visibility } : {}),
      };
      const after: SnippetRecord = {
        ...snippet,
        title: changes.title ?? snippet.title,
        fileName: changes.file_name ?? snippet.fileName,
        content: changes.content ?? snippet.content,
      };
      validate(after, changes.content !== undefined, command.sizeLimit);
      return Object.keys(changes).length === 0 ? [] : [{ type: 'SnippetUpdated', data: { ...ref, changes } }];
    }
    case 'DeleteSnippet':
      return [{ type: 'SnippetDeleted', data: ref }];
    default:
      return unhandled(command);
  }
}

export const snippetDecider: Decider<SnippetCommand, SnippetEvent, SnippetState, number> = {
  initialState: (id) => ({ id, snippet: null }),
  evolve,
  decide,
};

// ───────────────────────────── The aggregate ─────────────────────────────

/** One snippet, personal or of a project (src/domain/snippets.ts). */
export const snippets = defineAggregate({
  name: 'snippets',
  streamId: snippetStreamId,
  events: snippetEvents,
  decider: snippetDecider,
  index: snippetEventIndex,
  idSequence: 'snippets_id_seq',
});
