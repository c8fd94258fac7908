import { unhandled } from '../../domain/decider.js';
import type { UserEvent } from '../../domain/users.js';
import { avatarPath } from '../../domain/uploads.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projected } from '../projector.js';

/**
 * What each user event writes to the user's `users` row (src/projections/users.ts writes
 * it: one event at a time, or a page of them folded together on the rebuild path).
 */

type Stored = UserEvent & ProjectedEvent;

/** The full `users` row of a UserCreated (JSON values: identities as an array). */
export function createdRow(event: Extract<Stored, { type: 'UserCreated' }>) {
  const at = event.occurredAt.toISOString();
  const { namespace_id: _ns, password_hash: _, confirmed, password_reset_required: __, ...profile } = event.data;
  // Fast path (not a pattern to copy): Object.assign, not `{ ...profile, … }`, whose literal
  // drops V8 into dictionary mode, ~50 µs a row in a rebuild.
  return Object.assign(profile, {
    state: 'active' as const,
    avatar_url: null,
    avatar_sha256: null,
    two_factor_enabled: false,
    confirmed_at: confirmed ? at : null,
    password_expires_at: null,
    last_sign_in_at: null,
    current_sign_in_at: null,
    last_activity_on: null,
    status_emoji: null,
    status_message: null,
    status_message_html: null,
    created_at: at,
    updated_at: at,
    stream_version: event.streamVersion,
  });
}

/** The events that change the user's `users` row (and only that). */
export type RowUpdate = Projected<
  'UserProfileUpdated' | 'UserPasswordChanged' | 'UserBlocked' | 'UserUnblocked' | 'UserStatusSet' | 'UserStatusCleared' | 'UserEmailChangeRequested' | 'UserAvatarChanged'
>;

/**
 * The `users` columns an updating event sets (besides updated_at and stream_version), or
 * undefined for the events that create or delete the row or write the other tables.
 */
export function rowChanges(event: RowUpdate): Record<string, unknown>;
export function rowChanges(event: Stored): Record<string, unknown> | undefined;
export function rowChanges(event: Stored): Record<string, unknown> | undefined {
  switch (event.type) {
    case 'UserProfileUpdated':
      return { ...event.data.changes };
    case 'UserPasswordChanged':
      return { password_expires_at: event.data.expires_now ? event.occurredAt.toISOString() : null };
    case 'UserBlocked':
      return { state: 'blocked' };
    case 'UserUnblocked':
      return { state: 'active' };
    case 'UserStatusSet':
      return { status_emoji: event.data.emoji, status_message: event.data.message, status_message_html: event.data.message_html };
    case 'UserStatusCleared':
      return { status_emoji: null, status_message: null, status_message_html: null };
    case 'UserEmailChangeRequested':
      // Not shown by the API (GitLab keeps unconfirmed_email for the confirmation mail).
      return {};
    case 'UserAvatarChanged':
      // The path only (the API puts the instance's URL before it), and the upload it serves.
      return { avatar_url: avatarPath('user', event.data.id, event.data.avatar.filename), avatar_sha256: event.data.avatar.sha256 };
    case 'UserCreated':
    case 'UserDeleted':
    case 'PersonalAccessTokenCreated':
    case 'PersonalAccessTokenRevoked':
    case 'UserCustomAttributeSet':
    case 'UserCustomAttributeDeleted':
      return undefined;
    default:
      return unhandled(event);
  }
}
