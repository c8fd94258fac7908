import { z } from 'zod';
import { type Decider, unhandled } from '../decider.js';
import { invalid } from '../errors.js';
import type { EventOf, EventSchemas, FeedIndex } from '../events.js';
import { DEFAULT_FLAGS, EVENT_FLAGS, type Flags, type KindSpec, type Properties, type PropertyValue, isSecretField, kindOf } from './catalogue.js';

/**
 * A project's integration of one kind (GitLab's `Service` row, unique by project and type):
 * stream `integration-<project id>-<slug>`. One stream per (project, kind) because that is
 * GitLab's unit — one row per kind, changed and deactivated on its own — so two kinds never
 * contend, and the stream's key is the uniqueness GitLab validates.
 *
 * Events are snapshots of what a follower needs (the delivery reactor): whether it is
 * active, its event flags, its settings; a secret appears only as a keyed fingerprint —
 * its value is sealed outside the log (src/commands/integrations.ts).
 */

// ───────────────────────────── Events ─────────────────────────────

const propertyValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const ofIntegration = { id: z.int(), project_id: z.int(), kind: z.string() };

export const integrationEvents = {
  /** PUT: the integration active, with every flag and (non-secret) property after the change. */
  IntegrationSaved: z.strictObject({
    ...ofIntegration,
    flags: z.strictObject(Object.fromEntries(EVENT_FLAGS.map((f) => [f, z.boolean()])) as Record<(typeof EVENT_FLAGS)[number], z.ZodBoolean>),
    properties: z.record(z.string(), propertyValue),
    /** The secret fields set, each with its keyed fingerprint (never the value). */
    secrets: z.record(z.string(), z.string()),
  }),
  /** DELETE: inactive, every property nil, the secrets gone (GitLab nils the fields). */
  IntegrationDisabled: z.strictObject(ofIntegration),
} satisfies EventSchemas;

export type IntegrationEvent = EventOf<typeof integrationEvents>;

export interface IntegrationKey {
  readonly projectId: number;
  readonly kind: string;
}

export const integrationStreamId = ({ projectId, kind }: IntegrationKey) => `integration-${projectId}-${kind}`;

export const integrationEventIndex = (event: IntegrationEvent): FeedIndex => ({
  projectId: event.data.project_id,
  targetType: 'Service',
  targetId: event.data.id,
});

// ───────────────────────────── State ─────────────────────────────

export interface IntegrationState {
  readonly projectId: number;
  readonly kind: string;
  /** null: never saved (GitLab's find_or_initialize_service builds an unsaved one). */
  readonly id: number | null;
  readonly active: boolean;
  readonly flags: Flags;
  readonly properties: Properties;
  readonly secrets: Readonly<Record<string, string>>;
}

/** A kind's properties as a new integration has them (initialize_properties). */
export const initialProperties = (kind: KindSpec | undefined): Properties => ({ ...(kind?.defaults ?? {}) });

/** Every field nil (DELETE): secrets aside, they are not properties here. */
export const nilProperties = (kind: KindSpec | undefined): Properties =>
  Object.fromEntries((kind?.fields ?? []).filter((f) => !isSecretField(f.name)).map((f) => [f.name, null]));

// ───────────────────────────── Commands ─────────────────────────────

export type IntegrationCommand =
  | {
      readonly type: 'SaveIntegration';
      /** The id a new integration takes (from integrations_id_seq); an existing one keeps its own. */
      readonly newId: number;
      readonly properties: Properties;
      readonly flags: Partial<Flags>;
      /** Secret fields sent: their fingerprint, or null for a blank value (cleared). */
      readonly secrets: Readonly<Record<string, string | null>>;
      /** URL fields the SSRF guard or URL parsing refused ("is blocked: …"), found before deciding (DNS is I/O). */
      readonly urlErrors: Readonly<Record<string, readonly string[]>>;
    }
  | { readonly type: 'DisableIntegration'; readonly newId: number };

// ───────────────────────────── Rules ─────────────────────────────

const blank = (value: PropertyValue | undefined) => value === null || value === undefined || (typeof value === 'string' && value.trim() === '');

/**
 * The model's validations when active, in the order of the kind's fields: presence of the
 * required ones, PublicUrlValidator (a blank URL "must be a valid URL"; the guard's findings
 * otherwise), inclusion of `branches_to_be_notified`.
 */
function validate(kind: KindSpec, properties: Properties, secrets: Readonly<Record<string, string>>, urlErrors: Readonly<Record<string, readonly string[]>>) {
  const fields: Record<string, string[]> = {};
  for (const field of kind.fields) {
    const value = isSecretField(field.name) ? secrets[field.name] : properties[field.name];
    const errors: string[] = [];
    if (field.required && blank(value)) errors.push("can't be blank");
    if (field.url && field.required && blank(value)) errors.push('must be a valid URL');
    errors.push(...(urlErrors[field.name] ?? []));
    if (field.values && !blank(value) && !field.values.includes(String(value))) errors.push('is not included in the list');
    if (errors.length > 0) fields[field.name] = errors;
  }
  if (Object.keys(fields).length > 0) throw invalid(fields);
}

const sameRecord = (a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: IntegrationState, event: IntegrationEvent): IntegrationState {
  switch (event.type) {
    case 'IntegrationSaved':
      return { ...state, id: event.data.id, active: true, flags: event.data.flags, properties: event.data.properties, secrets: event.data.secrets };
    case 'IntegrationDisabled':
      return { ...state, id: event.data.id, active: false, properties: nilProperties(kindOf(state.kind)), secrets: {} };
    default:
      return unhandled(event);
  }
}

function decide(command: IntegrationCommand, state: IntegrationState): IntegrationEvent[] {
  const kind = kindOf(state.kind);
  // The route serves known kinds only: another is a defect of the caller.
  if (!kind) throw new Error(`unknown integration kind ${state.kind}`);
  const ref = { id: state.id ?? command.newId, project_id: state.projectId, kind: state.kind };
  switch (command.type) {
    case 'SaveIntegration': {
      // Service#update(params.merge(active: true)): the given fields over the current ones.
      const properties = { ...state.properties, ...command.properties };
      const secrets: Record<string, string> = { ...state.secrets };
      for (const [name, print] of Object.entries(command.secrets)) {
        if (print === null) delete secrets[name];
        else secrets[name] = print;
      }
      const flags = { ...state.flags, ...command.flags };
      validate(kind, properties, secrets, command.urlErrors);
      const unchanged = state.id !== null && state.active && sameRecord(properties, state.properties) && sameRecord(secrets, state.secrets) && sameRecord(flags, state.flags);
      return unchanged ? [] : [{ type: 'IntegrationSaved', data: { ...ref, flags, properties, secrets } }];
    }
    case 'DisableIntegration': {
      // GitLab saves even a never-configured one, inactive (destroy_conditionally! + update).
      const nil = nilProperties(kind);
      const unchanged = state.id !== null && !state.active && sameRecord(state.properties, nil) && Object.keys(state.secrets).length === 0;
      return unchanged ? [] : [{ type: 'IntegrationDisabled', data: ref }];
    }
    default:
      return unhandled(command);
  }
}

export const integrationDecider: Decider<IntegrationCommand, IntegrationEvent, IntegrationState, IntegrationKey> = {
  initialState: ({ projectId, kind }) => ({ projectId, kind, id: null, active: false, flags: DEFAULT_FLAGS, properties: initialProperties(kindOf(kind)), secrets: {} }),
  evolve,
  decide,
};
