import { sql, type ColumnType, type Selectable } from 'kysely';
import type { Db } from '../database/database.js';
import { PROFILE_EDIT_RUNS, type Identity, type UserEvent } from '../domain/users.js';
import type { ProjectedEvent } from '../eventstore/types.js';
import { precompiledPerShape, type Slot } from '../precompiled.js';
import { defineProjector, type Handlers } from './projector.js';
import { recordset } from './recordset.js';
import { type StreamVersionsTable } from './stream-versions.js';
import { createdRow, rowChanges, type RowUpdate } from './users/rows.js';
import type { Timestamp, NullableTimestamp } from '../database/columns.js';

// ───────────────────────────── Tables ─────────────────────────────


export interface UsersTable {
  id: number;
  username: string;
  email: string;
  name: string;
  state: 'active' | 'blocked';
  is_admin: boolean;
  can_create_group: boolean;
  projects_limit: number;
  external: boolean;
  private_profile: boolean;
  bio: string;
  location: string;
  public_email: string;
  skype: string;
  linkedin: string;
  twitter: string;
  website_url: string;
  organization: string;
  theme_id: number;
  color_scheme_id: number;
  note: string | null;
  shared_runners_minutes_limit: number | null;
  extra_shared_runners_minutes_limit: number | null;
  identities: ColumnType<Identity[], string, string>;
  avatar_url: string | null;
  two_factor_enabled: boolean;
  confirmed_at: NullableTimestamp;
  password_expires_at: NullableTimestamp;
  last_sign_in_at: NullableTimestamp;
  current_sign_in_at: NullableTimestamp;
  last_activity_on: string | null;
  status_emoji: string | null;
  status_message: string | null;
  status_message_html: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  stream_version: number;
  /** The upload `avatar_url` serves: its SHA-256 in `uploads` (migration 0051). Never shown by the API. */
  avatar_sha256: string | null;
}

export interface PersonalAccessTokensTable {
  id: number;
  user_id: number;
  name: string;
  token_digest: string;
  scopes: string[];
  impersonation: boolean;
  revoked: boolean;
  expires_at: string | null;
  created_at: Timestamp;
}

/** GitLab's user_custom_attributes (migration 0013_users). */
export interface UserCustomAttributesTable {
  user_id: number;
  key: string;
  value: string;
  /** Stream version of the event that first set the key: GitLab lists attributes in creation order. */
  created_version: number;
  created_at: Timestamp;
  updated_at: Timestamp;
  stream_version: number;
}

export interface UsersReadTables {
  users: UsersTable;
  personal_access_tokens: PersonalAccessTokensTable;
  user_custom_attributes: UserCustomAttributesTable;
  users_stream_versions: StreamVersionsTable;
}

export type UserRow = Selectable<UsersTable>;
export type TokenRow = Selectable<PersonalAccessTokensTable>;

/**
 * What authentication reads of the caller: who it is and what policies ask. Every request
 * decodes it, so it leaves out the ~30 profile columns that only GET /user shows.
 */
export const AUTH_USER_COLUMNS = ['id', 'username', 'state', 'is_admin', 'can_create_group', 'projects_limit', 'external'] as const;
export type AuthUser = Pick<UserRow, (typeof AUTH_USER_COLUMNS)[number]>;
export type CustomAttributeRow = Selectable<UserCustomAttributesTable>;

// ───────────────────────────── Projector ─────────────────────────────

type Stored = UserEvent & ProjectedEvent;

const jsonColumn = (values: Record<string, unknown>) =>
  'identities' in values ? { ...values, identities: JSON.stringify(values.identities) } : values;

// Fast path (not a pattern to copy): compiled once per set of columns (src/precompiled.ts),
// since a status change runs it on every PUT /user/status.
/** The guarded row update of one set of columns. */
const rowUpdate = precompiledPerShape((columns) => (db: Db, ...values: Slot<unknown>[]) => {
  const n = columns.length;
  const set = Object.fromEntries(columns.map((column, i) => [column, values[i]]));
  return db
    .updateTable('users')
    .set({ ...set, updated_at: values[n] as Slot<string>, stream_version: values[n + 1] as Slot<number> })
    .where('id', '=', values[n + 2] as Slot<number>)
    .where('stream_version', '<', values[n + 1] as Slot<number>);
});


/** A change of the user's row: guarded by the row's stream version too, so a replayed event changes nothing. */
async function updateRow(event: RowUpdate, trx: Db) {
  const values = jsonColumn(rowChanges(event));
  const columns = Object.keys(values);
  await rowUpdate(columns).send(trx, ...columns.map((column) => values[column]), event.occurredAt.toISOString(), event.streamVersion, event.data.id);
}

/** What each event does, once it is known to be new to the projection (the kernel or the batch path checked its stream version). */
const on: Handlers = {
  UserCreated: async (event, trx) =>
    sql`insert into users select * from ${recordset('users', [createdRow(event)])} on conflict (id) do nothing`.execute(trx),
  UserProfileUpdated: updateRow,
  UserPasswordChanged: updateRow,
  UserBlocked: updateRow,
  UserUnblocked: updateRow,
  UserStatusSet: updateRow,
  UserStatusCleared: updateRow,
  UserEmailChangeRequested: updateRow,
  UserAvatarChanged: updateRow,
  UserDeleted: async ({ data }, trx) => {
    await trx.deleteFrom('personal_access_tokens').where('user_id', '=', data.id).execute();
    await trx.deleteFrom('user_custom_attributes').where('user_id', '=', data.id).execute();
    await trx.deleteFrom('users').where('id', '=', data.id).execute();
  },
  PersonalAccessTokenCreated: async ({ data: d, occurredAt }, trx) => {
    const row = {
      id: d.id,
      user_id: d.user_id,
      name: d.name,
      token_digest: d.token_digest,
      scopes: [...d.scopes],
      impersonation: d.impersonation,
      revoked: false,
      expires_at: d.expires_at,
      created_at: occurredAt.toISOString(),
    };
    await sql`insert into personal_access_tokens select * from ${recordset('personal_access_tokens', [row])} on conflict (id) do nothing`.execute(trx);
  },
  PersonalAccessTokenRevoked: async ({ data }, trx) => trx.updateTable('personal_access_tokens').set({ revoked: true }).where('id', '=', data.id).execute(),
  UserCustomAttributeSet: async ({ data, occurredAt, streamVersion: v }, trx) => {
    const at = occurredAt.toISOString();
    const { id, key, value } = data;
    await sql`
      insert into user_custom_attributes as a (user_id, key, value, created_version, created_at, updated_at, stream_version)
      select ${id}::integer, ${key}::text, ${value}::text, ${v}::integer, ${at}::timestamptz, ${at}::timestamptz, ${v}::integer
      on conflict (user_id, key) do update set value = excluded.value, updated_at = excluded.updated_at, stream_version = excluded.stream_version
       where a.stream_version < excluded.stream_version`.execute(trx);
  },
  UserCustomAttributeDeleted: async ({ data, streamVersion }, trx) =>
    trx
      .deleteFrom('user_custom_attributes')
      .where('user_id', '=', data.id)
      .where('key', '=', data.key)
      .where('stream_version', '<', streamVersion)
      .execute(),
};

/**
 * Every event of a user stream is applied once: the kernel guards it by the stream version
 * recorded in users_stream_versions, which outlives the rows (UserCreated or
 * UserCustomAttributeSet replayed after a deletion write nothing). Writes only, so a
 * command's events are projected with its append in one round trip. Row updates are guarded
 * by the row's stream_version too; deletions and revocations set absolute values.
 */
export const usersProjector = defineProjector({
  name: 'users',
  // 2: avatar_sha256 (migration 0051), filled in for the avatars set before it by the rebuild a bump brings.
  version: 2,
  tables: ['users', 'personal_access_tokens', 'user_custom_attributes'],
  on,
  // A status set or cleared sets all three status columns, and the row's time and version.
  lastWins: [['UserStatusSet', 'UserStatusCleared']],
  // A profile edit sets the row's columns its changes name, and the row's time and version.
  mergeRuns: [PROFILE_EDIT_RUNS],

  /** Rebuild path: the batch in parts (untilTakenAgain), each the way batchPart says. */
  async batch(events, trx, handle) {
    for (const part of untilTakenAgain(events)) await batchPart(part, trx, handle);
  },
});

/** A username or email: the columns unique indexes keep (users_username_lower, users_email_lower). */
const takesName = (changes: Record<string, unknown> | undefined) => changes !== undefined && ('username' in changes || 'email' in changes);

/**
 * The batch cut where a username or email may be taken again: before the first event that
 * takes one (a creation, a rename) after one was given up (a rename, a deletion). batchPart
 * inserts a part's creations before its updates and its deletions, and unique indexes check
 * row by row, so a name given up and taken again within one part would clash (issue 21: a
 * rename a → b then b → a, a user deleted and its username taken). Within a part, every name
 * is taken before any is given up, and that holds in any order.
 */
function untilTakenAgain(events: readonly ProjectedEvent[]): ProjectedEvent[][] {
  const parts: ProjectedEvent[][] = [[]];
  let givenUp = false;
  for (const stored of events) {
    const event = stored as Stored;
    const renames = takesName(rowChanges(event)); // and gives one up
    if (givenUp && (renames || event.type === 'UserCreated')) {
      parts.push([]);
      givenUp = false;
    }
    parts.at(-1)!.push(event);
    if (renames || event.type === 'UserDeleted') givenUp = true;
  }
  return parts;
}

/**
 * Rebuild path, the same rows as `apply` event by event in a few statements per page: a
 * user created in the batch gets one row with the batch's later updates of that user
 * folded in (a stream's version 1 precedes everything else of that user); other users'
 * updates are merged per user into one UPDATE per changed-column set; then the remaining
 * events (tokens, custom attributes, deletions) in log order. No remaining event of a
 * user is followed by an update of that user's row: deletion is the last.
 */
async function batchPart(events: readonly ProjectedEvent[], trx: Db, handle: (event: ProjectedEvent) => Promise<unknown>) {
  const created = new Map<number, { row: ReturnType<typeof createdRow>; folded: Stored[] }>();
  const updates: Stored[] = [];
  const rest: Stored[] = [];
  for (const stored of events) {
    const event = stored as Stored;
    const changes = rowChanges(event);
    const creation = changes && created.get(event.data.id);
    if (creation) {
      Object.assign(creation.row, changes, { updated_at: event.occurredAt.toISOString(), stream_version: event.streamVersion });
      creation.folded.push(event);
    } else if (changes) updates.push(event);
    else if (event.type === 'UserCreated' && !created.has(event.data.id)) created.set(event.data.id, { row: createdRow(event), folded: [] });
    else rest.push(event);
  }
  // A row that was there already (a creation replayed) takes its updates the guarded way.
  for (const id of await insertCreated(trx, [...created.values()].map((c) => c.row))) updates.push(...created.get(id)!.folded);
  if (updates.length > 0) await applyMergedUpdates(trx, updates);
  for (const event of rest) await handle(event);
}

const ROWS_PER_STATEMENT = 2000;

/** Inserts new users' rows; returns the ids whose row was there already (left alone). */
async function insertCreated(trx: Db, rows: readonly (Record<string, unknown> & { id: number })[]): Promise<number[]> {
  const existing: number[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
    const { rows: inserted } = await sql<{ id: number }>`
      insert into users select * from ${recordset('users', chunk)} on conflict (id) do nothing returning id`.execute(trx);
    if (inserted.length === chunk.length) continue;
    const fresh = new Set(inserted.map((r) => r.id));
    for (const row of chunk) if (!fresh.has(row.id)) existing.push(row.id);
  }
  return existing;
}

async function applyMergedUpdates(trx: Db, events: readonly Stored[]) {
  const merged = new Map<number, { changes: Record<string, unknown>; from: number; to: number; at: string }>();
  for (const event of events) {
    const id = event.data.id;
    const entry = merged.get(id) ?? { changes: {}, from: event.streamVersion, to: event.streamVersion, at: '' };
    Object.assign(entry.changes, rowChanges(event));
    entry.to = event.streamVersion;
    entry.at = event.occurredAt.toISOString();
    merged.set(id, entry);
  }
  const bySignature = new Map<string, { columns: string[]; rows: Record<string, unknown>[] }>();
  for (const [id, entry] of merged) {
    const columns = Object.keys(entry.changes).sort();
    const signature = columns.join(',');
    const group = bySignature.get(signature) ?? { columns, rows: [] };
    group.rows.push({ ...entry.changes, id, updated_at: entry.at, stream_version: entry.to, first_version: entry.from });
    bySignature.set(signature, group);
  }
  for (const { columns, rows } of bySignature.values()) {
    const assignments = sql.join([...columns, 'updated_at', 'stream_version'].map((c) => sql`${sql.ref(c)} = v.${sql.ref(c)}`));
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
      // Guarded like `apply`: a row already at (or past) the first merged version is left alone.
      await sql`update users as u set ${assignments}
                  from ${recordset('users', chunk)} as v
                  join json_to_recordset(${JSON.stringify(chunk.map((r) => ({ id: r.id, first_version: r.first_version })))}::json)
                    as f(id integer, first_version integer) on f.id = v.id
                 where u.id = v.id and u.stream_version < f.first_version`.execute(trx);
    }
  }
}

declare module '../database/database.js' {
  interface Database extends UsersReadTables {}
}
