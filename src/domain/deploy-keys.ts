import { z } from 'zod';
import { type ClaimChanges, type ClaimRefusal, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import { type FieldErrors, invalid, notFound, recordNotFound } from './errors.js';
import type { EventOf, EventSchemas } from './events.js';
import { type KeyRestrictions, keyErrors, parsePublicKey, sanitizeKey, titleErrors } from './ssh-keys.js';
import { defineAggregate } from './aggregate.js';

/**
 * Deploy keys (GitLab's DeployKey and DeployKeysProject): one aggregate per key, stream
 * `deploy-key-<id>`, holding the key and the projects it is enabled in. A key's text is
 * public: nothing secret reaches the log.
 */

// ───────────────────────────── Events ─────────────────────────────

const link = { id: z.int(), project_id: z.int() };

export const deployKeyEvents = {
  DeployKeyCreated: z.strictObject({
    id: z.int(),
    title: z.string(),
    key: z.string(),
    fingerprint: z.string(),
    fingerprint_sha256: z.string(),
    user_id: z.int().nullable(),
  }),
  DeployKeyTitleChanged: z.strictObject({ id: z.int(), title: z.string() }),
  DeployKeyLinked: z.strictObject({ ...link, can_push: z.boolean() }),
  DeployKeyLinkUpdated: z.strictObject({ ...link, can_push: z.boolean() }),
  DeployKeyUnlinked: z.strictObject(link),
  DeployKeyDeleted: z.strictObject({ id: z.int() }),
} satisfies EventSchemas;

export type DeployKeyEvent = EventOf<typeof deployKeyEvents>;

export const deployKeyStreamId = (id: number) => `deploy-key-${id}`;

// ───────────────────────────── State ─────────────────────────────

export interface DeployKeyState {
  readonly id: number;
  readonly status: 'new' | 'active' | 'deleted';
  readonly title: string;
  readonly fingerprint: string | null;
  /** Projects the key is enabled in → can_push. */
  readonly links: ReadonlyMap<number, boolean>;
}

// ───────────────────────────── Commands ─────────────────────────────

export type DeployKeyCommand =
  | {
      readonly type: 'CreateDeployKey';
      readonly projectId: number;
      readonly title: string;
      /** As given, stripped; sanitized here as GitLab's `key=` does. */
      readonly key: string;
      readonly canPush: boolean;
      readonly userId: number | null;
      readonly restrictions: KeyRestrictions;
      /** Whether another key holds the fingerprint, read before deciding (the claim holds it at commit). */
      readonly fingerprintTaken: boolean;
    }
  | { readonly type: 'LinkDeployKey'; readonly projectId: number; readonly canPush: boolean }
  | { readonly type: 'UpdateDeployKey'; readonly projectId: number; readonly title: string | undefined; readonly canPush: boolean | undefined }
  | {
      readonly type: 'UnlinkDeployKey';
      readonly projectId: number;
      /** The projects that still exist among the key's links (a deleted project takes its link along). */
      readonly liveProjectIds: readonly number[];
    };

// ───────────────────────────── Validation ─────────────────────────────

/**
 * The errors of the key saved through a project's deploy_keys_projects (nested attributes):
 * GitLab names each field `deploy_key.<field>`.
 */
const nested = (errors: FieldErrors): FieldErrors => Object.fromEntries(Object.entries(errors).map(([field, messages]) => [`deploy_key.${field}`, messages]));

export const FINGERPRINT_CLAIM = 'key_fingerprint';

/** GitLab validates the fingerprint's uniqueness on the model: a taken one is a field error. */
export const deployKeyClaimRefusal: ClaimRefusal = () => invalid(nested({ fingerprint: ['has already been taken'] }));

/** Keys' fingerprints are unique over every key (GitLab: `validates :fingerprint, uniqueness: true` on Key). */
export function deployKeyClaims(event: DeployKeyEvent, before: DeployKeyState): ClaimChanges {
  const claim = (fingerprint: string) => ({ kind: FINGERPRINT_CLAIM, key: fingerprint, conflictMessage: 'Fingerprint has already been taken' });
  switch (event.type) {
    case 'DeployKeyCreated':
      return { acquire: [claim(event.data.fingerprint)], release: [] };
    case 'DeployKeyDeleted':
      return before.fingerprint === null ? NO_CLAIMS : { acquire: [], release: [claim(before.fingerprint)] };
    default:
      return NO_CLAIMS;
  }
}

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (id: number): DeployKeyState => ({ id, status: 'new', title: '', fingerprint: null, links: new Map() });

function withLinks(state: DeployKeyState, change: (links: Map<number, boolean>) => void): DeployKeyState {
  const links = new Map(state.links);
  change(links);
  return { ...state, links };
}

function evolve(state: DeployKeyState, event: DeployKeyEvent): DeployKeyState {
  switch (event.type) {
    case 'DeployKeyCreated':
      return { ...state, status: 'active', title: event.data.title, fingerprint: event.data.fingerprint };
    case 'DeployKeyTitleChanged':
      return { ...state, title: event.data.title };
    case 'DeployKeyLinked':
    case 'DeployKeyLinkUpdated':
      return withLinks(state, (links) => links.set(event.data.project_id, event.data.can_push));
    case 'DeployKeyUnlinked':
      return withLinks(state, (links) => links.delete(event.data.project_id));
    case 'DeployKeyDeleted':
      return { ...state, status: 'deleted', links: new Map() };
    default:
      return state;
  }
}

function decide(command: DeployKeyCommand, state: DeployKeyState): DeployKeyEvent[] {
  const { id } = state;
  switch (command.type) {
    case 'CreateDeployKey': {
      if (state.status !== 'new') throw new Error(`deploy key ${id} exists already`);
      const key = sanitizeKey(command.key);
      const errors = keyErrors(command.title, key, command.restrictions, command.fingerprintTaken);
      const parsed = parsePublicKey(key);
      if (Object.keys(errors).length > 0 || !parsed) throw invalid(nested(errors));
      return [
        {
          type: 'DeployKeyCreated',
          data: { id, title: command.title, key, fingerprint: parsed.fingerprint, fingerprint_sha256: parsed.fingerprintSha256, user_id: command.userId },
        },
        { type: 'DeployKeyLinked', data: { id, project_id: command.projectId, can_push: command.canPush } },
      ];
    }
    case 'LinkDeployKey':
      // Projects::EnableDeployKeyService: a missing key is "404 Deploy Key Not Found"; an enabled one stays as it is.
      if (state.status !== 'active') throw notFound('Deploy Key');
      if (state.links.has(command.projectId)) return [];
      return [{ type: 'DeployKeyLinked', data: { id, project_id: command.projectId, can_push: command.canPush } }];
    case 'UpdateDeployKey': {
      const canPush = state.links.get(command.projectId);
      // GitLab: deploy_keys_projects.find_by! — "404 Not found".
      if (state.status !== 'active' || canPush === undefined) throw recordNotFound('Deploy Key');
      const events: DeployKeyEvent[] = [];
      if (command.title !== undefined) {
        const errors = titleErrors(command.title);
        if (errors.length > 0) throw invalid(nested({ title: errors }));
        if (command.title !== state.title) events.push({ type: 'DeployKeyTitleChanged', data: { id, title: command.title } });
      }
      if (command.canPush !== undefined && command.canPush !== canPush) {
        events.push({ type: 'DeployKeyLinkUpdated', data: { id, project_id: command.projectId, can_push: command.canPush } });
      }
      return events;
    }
    case 'UnlinkDeployKey': {
      if (state.status !== 'active' || !state.links.has(command.projectId)) throw notFound('Deploy Key');
      const unlinked: DeployKeyEvent = { type: 'DeployKeyUnlinked', data: { id, project_id: command.projectId } };
      // DeployKeysProject#destroy_orphaned_deploy_key: a (private) key used nowhere else goes with its last link.
      const elsewhere = [...state.links.keys()].some((projectId) => projectId !== command.projectId && command.liveProjectIds.includes(projectId));
      return elsewhere ? [unlinked] : [unlinked, { type: 'DeployKeyDeleted', data: { id } }];
    }
    default:
      return unhandled(command);
  }
}

export const deployKeyDecider: Decider<DeployKeyCommand, DeployKeyEvent, DeployKeyState, number> = { initialState, evolve, decide };

// ───────────────────────────── Feed index ─────────────────────────────

export function deployKeyEventIndex(event: DeployKeyEvent) {
  return {
    ...('project_id' in event.data ? { projectId: event.data.project_id } : {}),
    targetType: 'DeployKey',
    targetId: event.data.id,
  };
}

// ───────────────────────────── The aggregate ─────────────────────────────

/** One deploy key and the projects it is enabled in (src/domain/deploy-keys.ts). */
export const deployKeys = defineAggregate({
  name: 'deploy_keys',
  streamId: deployKeyStreamId,
  events: deployKeyEvents,
  decider: deployKeyDecider,
  claims: deployKeyClaims,
  claimRefusal: deployKeyClaimRefusal,
  index: deployKeyEventIndex,
  idSequence: 'deploy_keys_id_seq',
});
