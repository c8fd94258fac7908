import { z } from 'zod';
import { type ClaimChanges, type ClaimRefusal, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import { FINGERPRINT_CLAIM } from './deploy-keys.js';
import { invalid, notFound } from './errors.js';
import type { EventOf, EventSchemas } from './events.js';
import { type KeyRestrictions, keyErrors, parsePublicKey, sanitizeKey } from './ssh-keys.js';
import { defineAggregate } from './aggregate.js';

/**
 * Users' SSH keys (GitLab's Key with type nil): one aggregate per key, stream `ssh-key-<id>`.
 * GitLab keeps user keys and deploy keys in one `keys` table: their ids come from the same
 * sequence here, and their fingerprints are unique over both (the same claim). A key's text
 * is public: nothing secret reaches the log.
 */

// ───────────────────────────── Events ─────────────────────────────

export const userSshKeyEvents = {
  UserSshKeyAdded: z.strictObject({
    id: z.int(),
    user_id: z.int(),
    title: z.string(),
    key: z.string(),
    fingerprint: z.string(),
    fingerprint_sha256: z.string(),
  }),
  UserSshKeyRemoved: z.strictObject({ id: z.int(), user_id: z.int() }),
} satisfies EventSchemas;

export type UserSshKeyEvent = EventOf<typeof userSshKeyEvents>;

export const userSshKeyStreamId = (id: number) => `ssh-key-${id}`;

// ───────────────────────────── State ─────────────────────────────

export interface UserSshKeyState {
  readonly id: number;
  readonly status: 'new' | 'active' | 'removed';
  readonly userId: number | null;
  readonly fingerprint: string | null;
}

// ───────────────────────────── Commands ─────────────────────────────

export type UserSshKeyCommand =
  | {
      readonly type: 'AddUserSshKey';
      readonly userId: number;
      readonly title: string;
      /** As given; sanitized here as GitLab's `key=` does. */
      readonly key: string;
      readonly restrictions: KeyRestrictions;
      /** Whether another key (a user's or a deploy key) holds the fingerprint, read before deciding (the claim holds it at commit). */
      readonly fingerprintTaken: boolean;
    }
  | { readonly type: 'RemoveUserSshKey'; readonly userId: number };

// ───────────────────────────── Claims ─────────────────────────────

/** GitLab: `validates :fingerprint, uniqueness: true` on Key — a field error, not a 409. */
export const userSshKeyClaimRefusal: ClaimRefusal = () => invalid({ fingerprint: ['has already been taken'] });

/** The fingerprint claim deploy keys take too (GitLab's keys table holds both). */
export function userSshKeyClaims(event: UserSshKeyEvent, before: UserSshKeyState): ClaimChanges {
  const claim = (fingerprint: string) => ({ kind: FINGERPRINT_CLAIM, key: fingerprint, conflictMessage: 'Fingerprint has already been taken' });
  switch (event.type) {
    case 'UserSshKeyAdded':
      return { acquire: [claim(event.data.fingerprint)], release: [] };
    case 'UserSshKeyRemoved':
      return before.fingerprint === null ? NO_CLAIMS : { acquire: [], release: [claim(before.fingerprint)] };
    default:
      return NO_CLAIMS;
  }
}

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (id: number): UserSshKeyState => ({ id, status: 'new', userId: null, fingerprint: null });

function evolve(state: UserSshKeyState, event: UserSshKeyEvent): UserSshKeyState {
  switch (event.type) {
    case 'UserSshKeyAdded':
      return { ...state, status: 'active', userId: event.data.user_id, fingerprint: event.data.fingerprint };
    case 'UserSshKeyRemoved':
      return { ...state, status: 'removed' };
    default:
      return state;
  }
}

function decide(command: UserSshKeyCommand, state: UserSshKeyState): UserSshKeyEvent[] {
  const { id } = state;
  switch (command.type) {
    case 'AddUserSshKey': {
      if (state.status !== 'new') throw new Error(`SSH key ${id} exists already`);
      const key = sanitizeKey(command.key);
      // Key's validations in their order: title, key, fingerprint, then the instance's restrictions.
      const errors = keyErrors(command.title, key, command.restrictions, command.fingerprintTaken);
      const parsed = parsePublicKey(key);
      if (Object.keys(errors).length > 0 || !parsed) throw invalid(errors);
      return [
        {
          type: 'UserSshKeyAdded',
          data: { id, user_id: command.userId, title: command.title, key, fingerprint: parsed.fingerprint, fingerprint_sha256: parsed.fingerprintSha256 },
        },
      ];
    }
    case 'RemoveUserSshKey':
      // GitLab: `user.keys.find_by(id:)` — another user's key, or one gone, is "404 Key Not Found".
      if (state.status !== 'active' || state.userId !== command.userId) throw notFound('Key');
      return [{ type: 'UserSshKeyRemoved', data: { id, user_id: command.userId } }];
    default:
      return unhandled(command);
  }
}

export const userSshKeyDecider: Decider<UserSshKeyCommand, UserSshKeyEvent, UserSshKeyState, number> = { initialState, evolve, decide };

// ───────────────────────────── Feed index ─────────────────────────────

export function userSshKeyEventIndex(event: UserSshKeyEvent) {
  return { targetType: 'Key', targetId: event.data.id };
}

// ───────────────────────────── The aggregate ─────────────────────────────

/** One user's SSH key (src/domain/user-ssh-keys.ts). */
export const userSshKeys = defineAggregate({
  name: 'user_ssh_keys',
  streamId: userSshKeyStreamId,
  events: userSshKeyEvents,
  decider: userSshKeyDecider,
  claims: userSshKeyClaims,
  claimRefusal: userSshKeyClaimRefusal,
  index: userSshKeyEventIndex,
  // GitLab's keys table: user keys and deploy keys share their ids.
  idSequence: 'deploy_keys_id_seq',
});
