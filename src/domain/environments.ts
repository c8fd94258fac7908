import { z } from 'zod';
import { type ClaimChanges, type ClaimRefusal, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import { invalid, recordNotFound } from './errors.js';
import type { EventOf, EventSchemas, FeedIndex } from './events.js';
import { defineAggregate } from './aggregate.js';

/**
 * Environments of a project (GitLab's `Environment`): one aggregate per environment,
 * stream `environment-<id>`. The plain example docs/areas.md points to.
 */

// ───────────────────────────── Events ─────────────────────────────

const ofEnvironment = { id: z.int(), project_id: z.int() };

export const environmentEvents = {
  EnvironmentCreated: z.strictObject({ ...ofEnvironment, name: z.string(), slug: z.string(), external_url: z.string().nullable() }),
  EnvironmentUpdated: z.strictObject({
    ...ofEnvironment,
    changes: z.strictObject({ name: z.string().optional(), external_url: z.string().nullable().optional() }),
  }),
  EnvironmentStopped: z.strictObject(ofEnvironment),
  EnvironmentDeleted: z.strictObject(ofEnvironment),
} satisfies EventSchemas;

export type EnvironmentEvent = EventOf<typeof environmentEvents>;

export const environmentStreamId = (id: number) => `environment-${id}`;

export const environmentEventIndex = (event: EnvironmentEvent): FeedIndex => ({
  projectId: event.data.project_id,
  targetType: 'Environment',
  targetId: event.data.id,
});

// ───────────────────────────── State ─────────────────────────────

export type EnvironmentStatus = 'available' | 'stopped';

export interface EnvironmentRecord {
  readonly projectId: number;
  readonly name: string;
  readonly slug: string;
  readonly externalUrl: string | null;
  readonly state: EnvironmentStatus;
}

export interface EnvironmentState {
  readonly id: number;
  /** null: never created, or deleted. */
  readonly environment: EnvironmentRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

export type EnvironmentCommand =
  /** `slugSuffix`: six random characters from the caller, used when the slug differs from the name. */
  | { readonly type: 'CreateEnvironment'; readonly projectId: number; readonly name: string; readonly externalUrl: string | null; readonly slugSuffix: string }
  | { readonly type: 'UpdateEnvironment'; readonly name?: string; readonly externalUrl?: string | null }
  | { readonly type: 'StopEnvironment' }
  | { readonly type: 'DeleteEnvironment' };

// ───────────────────────────── Rules ─────────────────────────────

/** Gitlab::Regex.environment_name_regex (12.x): these characters, not starting or ending with '/'. */
const NAME_FORMAT = /^[a-zA-Z0-9_${}. -]([a-zA-Z0-9_/${}. -]*[a-zA-Z0-9_${}. -])?$/;
const NAME_FORMAT_MESSAGE = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'";
const MAX_LENGTH = 255;

/**
 * GitLab's Environment#generate_slug: lower-case, anything but a-z0-9 becomes '-', 'env-'
 * before a name that does not start with a letter, runs of '-' squeezed, at most 24
 * characters without a trailing '-'; and when that differs from the name, cut to 17
 * characters and given a '-' and the six-character suffix, so two names never share a slug.
 */
export function environmentSlug(name: string, suffix: string): string {
  let slug = name.toLowerCase().replace(/[^a-z0-9]/g, '-');
  if (!/^[a-z]/.test(slug)) slug = `env-${slug}`;
  slug = slug.replace(/-+/g, '-').slice(0, 24).replace(/-$/, '');
  if (slug === name) return slug;
  slug = slug.slice(0, 17);
  return `${slug.endsWith('-') ? slug : `${slug}-`}${suffix}`;
}

/** AddressableUrlValidator with GitLab's defaults (http and https, absolute): "is blocked: …". */
function externalUrlErrors(url: string | null): string[] {
  if (url === null) return [];
  const errors = url.length > MAX_LENGTH ? [`is too long (maximum is ${MAX_LENGTH} characters)`] : [];
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    return [...errors, 'is blocked: URI is invalid'];
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') errors.push('is blocked: Only allowed schemes are http, https');
  return errors;
}

/** Presence, length and format, each checked as Rails does: "" fails presence and format. */
function nameErrors(name: string): string[] {
  const errors = [];
  if (name.trim() === '') errors.push("can't be blank");
  if (name.length > MAX_LENGTH) errors.push(`is too long (maximum is ${MAX_LENGTH} characters)`);
  if (!NAME_FORMAT.test(name)) errors.push(NAME_FORMAT_MESSAGE);
  return errors;
}

/** Model validation, in the order GitLab's model declares it: name, then external_url. */
function validate(name: string, externalUrl: string | null) {
  const fields: Record<string, string[]> = {};
  const names = nameErrors(name);
  const urls = externalUrlErrors(externalUrl);
  if (names.length > 0) fields.name = names;
  if (urls.length > 0) fields.external_url = urls;
  if (Object.keys(fields).length > 0) throw invalid(fields);
}

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: EnvironmentState, event: EnvironmentEvent): EnvironmentState {
  switch (event.type) {
    case 'EnvironmentCreated': {
      const { project_id, name, slug, external_url } = event.data;
      return { ...state, environment: { projectId: project_id, name, slug, externalUrl: external_url, state: 'available' } };
    }
    case 'EnvironmentUpdated': {
      if (!state.environment) return state;
      const { name, external_url } = event.data.changes;
      return { ...state, environment: { ...state.environment, ...(name !== undefined ? { name } : {}), ...(external_url !== undefined ? { externalUrl: external_url } : {}) } };
    }
    case 'EnvironmentStopped':
      return state.environment ? { ...state, environment: { ...state.environment, state: 'stopped' } } : state;
    case 'EnvironmentDeleted':
      return { ...state, environment: null };
    default:
      return unhandled(event);
  }
}

function decide(command: EnvironmentCommand, state: EnvironmentState): EnvironmentEvent[] {
  const { id, environment } = state;
  if (command.type === 'CreateEnvironment') {
    // A new id each time: a second create on the stream is a defect of the caller.
    if (environment) throw new Error(`environment ${id} exists`);
    const name = command.name;
    const externalUrl = command.externalUrl === '' ? null : command.externalUrl;
    validate(name, externalUrl);
    const slug = environmentSlug(name, command.slugSuffix);
    return [{ type: 'EnvironmentCreated', data: { id, project_id: command.projectId, name, slug, external_url: externalUrl } }];
  }
  if (!environment) throw recordNotFound('Environment');
  const ref = { id, project_id: environment.projectId };
  switch (command.type) {
    case 'UpdateEnvironment': {
      // Environment's before_validation nullifies a blank external_url.
      const externalUrl = command.externalUrl === '' ? null : command.externalUrl;
      validate(command.name ?? environment.name, externalUrl === undefined ? environment.externalUrl : externalUrl);
      const changes = {
        ...(command.name !== undefined && command.name !== environment.name ? { name: command.name } : {}),
        ...(externalUrl !== undefined && externalUrl !== environment.externalUrl ? { external_url: externalUrl } : {}),
      };
      return Object.keys(changes).length === 0 ? [] : [{ type: 'EnvironmentUpdated', data: { ...ref, changes } }];
    }
    case 'StopEnvironment':
      // Environment#stop_with_action!: `return unless available?` — stopping a stopped one changes nothing.
      return environment.state === 'available' ? [{ type: 'EnvironmentStopped', data: ref }] : [];
    case 'DeleteEnvironment':
      return [{ type: 'EnvironmentDeleted', data: ref }];
    default:
      return unhandled(command);
  }
}

export const environmentDecider: Decider<EnvironmentCommand, EnvironmentEvent, EnvironmentState, number> = {
  initialState: (id) => ({ id, environment: null }),
  evolve,
  decide,
};

// ───────────────────────────── Claims ─────────────────────────────

/** `validates :name, uniqueness: { scope: :project_id }`, and the slug likewise. */
const nameClaim = (projectId: number, name: string) => ({ kind: 'environment_name', key: `${projectId}/${name}`, conflictMessage: 'Environment name has already been taken' });
const slugClaim = (projectId: number, slug: string) => ({ kind: 'environment_slug', key: `${projectId}/${slug}`, conflictMessage: 'Environment slug has already been taken' });

/** GitLab validates uniqueness on the model: a taken name is a field error. */
export const environmentClaimRefusal: ClaimRefusal = (claim) => invalid({ [claim.kind === 'environment_name' ? 'name' : 'slug']: ['has already been taken'] });

export function environmentClaims(event: EnvironmentEvent, before: EnvironmentState): ClaimChanges {
  switch (event.type) {
    case 'EnvironmentCreated':
      return { acquire: [nameClaim(event.data.project_id, event.data.name), slugClaim(event.data.project_id, event.data.slug)], release: [] };
    case 'EnvironmentUpdated': {
      const { name } = event.data.changes;
      if (name === undefined || !before.environment) return NO_CLAIMS;
      return { acquire: [nameClaim(event.data.project_id, name)], release: [nameClaim(event.data.project_id, before.environment.name)] };
    }
    case 'EnvironmentDeleted':
      return before.environment
        ? { acquire: [], release: [nameClaim(event.data.project_id, before.environment.name), slugClaim(event.data.project_id, before.environment.slug)] }
        : NO_CLAIMS;
    default:
      return NO_CLAIMS;
  }
}

// ───────────────────────────── The aggregate ─────────────────────────────

/** One environment of a project (src/domain/environments.ts). */
export const environments = defineAggregate({
  name: 'environments',
  streamId: environmentStreamId,
  events: environmentEvents,
  decider: environmentDecider,
  claims: environmentClaims,
  claimRefusal: environmentClaimRefusal,
  index: environmentEventIndex,
  idSequence: 'environments_id_seq',
});
