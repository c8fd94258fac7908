import { z } from 'zod';
import { type Decider, unhandled } from '../decider.js';
import { invalid, recordNotFound } from '../errors.js';
import type { EventOf, EventSchemas, FeedIndex } from '../events.js';
import { validBranchName } from '../repository/decider.js';

/**
 * Webhooks (GitLab's WebHook and its kinds ProjectHook, GroupHook, SystemHook): one aggregate
 * per hook, stream `hook-<id>`. Each event is a snapshot of the hook after it, what the
 * delivery reactor and the projection need; the token appears only as a keyed fingerprint —
 * its value is sealed outside the log (src/commands/hooks.ts), as integrations' secrets are.
 */

// ───────────────────────────── Events ─────────────────────────────

export const HOOK_KINDS = ['project', 'group', 'system'] as const;
export type HookKind = (typeof HOOK_KINDS)[number];

/** The `*_events` columns of `web_hooks` (12.10), in the table's order. */
export const HOOK_FLAGS = [
  'push_events',
  'issues_events',
  'confidential_issues_events',
  'merge_requests_events',
  'tag_push_events',
  'note_events',
  'confidential_note_events',
  'job_events',
  'pipeline_events',
  'wiki_page_events',
  'repository_update_events',
] as const;
export type HookFlag = (typeof HOOK_FLAGS)[number];
/** `confidential_note_events` is the one nullable column (no default in 12.10's schema). */
export type HookFlags = { readonly [F in HookFlag]: F extends 'confidential_note_events' ? boolean | null : boolean };

const flagsSchema = z.strictObject(
  Object.fromEntries(HOOK_FLAGS.map((f) => [f, f === 'confidential_note_events' ? z.boolean().nullable() : z.boolean()])) as {
    [F in HookFlag]: F extends 'confidential_note_events' ? z.ZodNullable<z.ZodBoolean> : z.ZodBoolean;
  },
);

const hookSnapshot = {
  id: z.int(),
  kind: z.enum(HOOK_KINDS),
  project_id: z.int().nullable(),
  group_id: z.int().nullable(),
  url: z.string(),
  flags: flagsSchema,
  push_events_branch_filter: z.string().nullable(),
  enable_ssl_verification: z.boolean(),
  /** The token's keyed fingerprint (never the value); null: no token. */
  token: z.string().nullable(),
};

export const hookEvents = {
  HookCreated: z.strictObject(hookSnapshot),
  /** PUT: the whole hook after the change. */
  HookUpdated: z.strictObject(hookSnapshot),
  HookDeleted: z.strictObject({ id: z.int(), kind: z.enum(HOOK_KINDS), project_id: z.int().nullable(), group_id: z.int().nullable() }),
} satisfies EventSchemas;

export type HookEvent = EventOf<typeof hookEvents>;
export type HookSnapshot = Extract<HookEvent, { type: 'HookCreated' }>['data'];

export const hookStreamId = (id: number) => `hook-${id}`;

export const hookEventIndex = (event: HookEvent): FeedIndex => ({
  projectId: event.data.project_id,
  groupId: event.data.group_id,
  targetType: event.data.kind === 'project' ? 'ProjectHook' : event.data.kind === 'group' ? 'GroupHook' : 'SystemHook',
  targetId: event.data.id,
});

// ───────────────────────────── State ─────────────────────────────

export interface HookState {
  readonly id: number;
  /** null: never created, or deleted. */
  readonly hook: HookSnapshot | null;
}

// ───────────────────────────── Commands ─────────────────────────────

/** What POST and PUT may set: every attribute is optional but `url` on create. */
export interface HookAttributes {
  readonly url?: string;
  readonly flags: Partial<Record<HookFlag, boolean>>;
  readonly pushEventsBranchFilter?: string;
  readonly enableSslVerification?: boolean;
  /** The token sent: its fingerprint, null for a blank one (none), undefined when not sent. */
  readonly token?: string | null;
  /** The token sent had a line break (`validates :token, format: { without: /\n/ }`), found before it was fingerprinted. */
  readonly tokenInvalid?: boolean;
  /** What the SSRF guard or URL parsing said of the URL ("is blocked: …"), found before deciding (DNS is I/O). */
  readonly urlErrors: readonly string[];
}

export type HookCommand =
  | ({ readonly type: 'CreateHook'; readonly kind: HookKind; readonly projectId: number | null; readonly groupId: number | null } & HookAttributes)
  | ({ readonly type: 'UpdateHook' } & HookAttributes)
  | { readonly type: 'DeleteHook' };

// ───────────────────────────── Rules ─────────────────────────────

/** A new hook's columns: web_hooks' defaults, and SystemHook's `default_value_for`s. */
export function defaultFlags(kind: HookKind): HookFlags {
  const system = kind === 'system';
  return {
    push_events: !system,
    issues_events: false,
    confidential_issues_events: false,
    merge_requests_events: false,
    tag_push_events: false,
    note_events: false,
    confidential_note_events: null,
    job_events: false,
    pipeline_events: false,
    wiki_page_events: false,
    repository_update_events: system,
  };
}

/** BranchFilterValidator: a branch name once its wildcards are letters, at most 4,000 characters; blank is none. */
export const BRANCH_FILTER_MAX = 4000;
function branchFilterErrors(filter: string | null): string[] {
  if (filter === null || filter.trim() === '') return [];
  const errors: string[] = [];
  if (!validBranchName(filter.replace(/\*/g, 'x'))) errors.push('is not a valid branch name');
  if (filter.length > BRANCH_FILTER_MAX) errors.push(`is longer than the allowed length of ${BRANCH_FILTER_MAX} characters.`);
  return errors;
}

/** WebHook's validations in their order: url (presence, public URL), token, branch filter. */
function validate(hook: HookSnapshot, attributes: HookAttributes) {
  const fields: Record<string, string[]> = {};
  const url = [...(hook.url.trim() === '' ? ["can't be blank"] : []), ...attributes.urlErrors];
  if (url.length > 0) fields.url = url;
  if (attributes.tokenInvalid) fields.token = ['is invalid'];
  const filter = branchFilterErrors(hook.push_events_branch_filter);
  if (filter.length > 0) fields.push_events_branch_filter = filter;
  if (Object.keys(fields).length > 0) throw invalid(fields);
}

function applied(hook: HookSnapshot, a: HookAttributes): HookSnapshot {
  return {
    ...hook,
    ...(a.url !== undefined ? { url: a.url } : {}),
    flags: { ...hook.flags, ...a.flags },
    ...(a.pushEventsBranchFilter !== undefined ? { push_events_branch_filter: a.pushEventsBranchFilter } : {}),
    ...(a.enableSslVerification !== undefined ? { enable_ssl_verification: a.enableSslVerification } : {}),
    ...(a.token !== undefined ? { token: a.token } : {}),
  };
}

const same = (a: HookSnapshot, b: HookSnapshot) => JSON.stringify(a) === JSON.stringify(b);

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: HookState, event: HookEvent): HookState {
  switch (event.type) {
    case 'HookCreated':
    case 'HookUpdated':
      return { ...state, hook: event.data };
    case 'HookDeleted':
      return { ...state, hook: null };
    default:
      return unhandled(event);
  }
}

function decide(command: HookCommand, state: HookState): HookEvent[] {
  const { id, hook } = state;
  if (command.type === 'CreateHook') {
    if (hook) throw new Error(`hook ${id} exists`);
    const blank: HookSnapshot = {
      id,
      kind: command.kind,
      project_id: command.projectId,
      group_id: command.groupId,
      url: '',
      flags: defaultFlags(command.kind),
      push_events_branch_filter: null,
      enable_ssl_verification: true,
      token: null,
    };
    const created = applied(blank, command);
    validate(created, command);
    return [{ type: 'HookCreated', data: created }];
  }
  if (!hook) throw recordNotFound('Hook');
  switch (command.type) {
    case 'UpdateHook': {
      const updated = applied(hook, command);
      validate(updated, command);
      return same(updated, hook) ? [] : [{ type: 'HookUpdated', data: updated }];
    }
    case 'DeleteHook':
      return [{ type: 'HookDeleted', data: { id, kind: hook.kind, project_id: hook.project_id, group_id: hook.group_id } }];
    default:
      return unhandled(command);
  }
}

export const hookDecider: Decider<HookCommand, HookEvent, HookState, number> = {
  initialState: (id) => ({ id, hook: null }),
  evolve,
  decide,
};
