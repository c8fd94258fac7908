import { ROLE_NAMES } from '../members.js';
import { xmlschema } from './payloads.js';

/**
 * The system events of GitLab 12.10's SystemHooksService#build_event_data: projects, users,
 * groups and memberships. Each subject is what its own stream said up to the event (a pure
 * fold of its history), so a destroyed project or user is described as it was, and a replay
 * describes it the same.
 */

/** An event of a subject's stream, as the reactor reads it. */
export interface Logged {
  readonly type: string;
  readonly data: any;
  readonly occurredAt: Date;
}

interface Dated {
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

const dates = (s: Dated) => ({ created_at: xmlschema(s.createdAt), updated_at: xmlschema(s.updatedAt) });

// ───────────────────────────── Subjects ─────────────────────────────

export interface ProjectSubject extends Dated {
  readonly id: number;
  readonly name: string;
  readonly path: string;
  readonly pathWithNamespace: string;
  readonly visibility: string;
  readonly namespaceId: number;
}

/** A project as its stream left it (ProjectCreated, then ProjectUpdated changes and ProjectTransferred). */
export function projectOf(history: readonly Logged[]): ProjectSubject | undefined {
  let subject: ProjectSubject | undefined;
  for (const { type, data, occurredAt } of history) {
    if (type === 'ProjectCreated') {
      subject = { id: data.id, name: data.name, path: data.path, pathWithNamespace: data.path_with_namespace, visibility: data.visibility, namespaceId: data.namespace_id, createdAt: occurredAt, updatedAt: occurredAt };
    } else if (subject && type === 'ProjectUpdated') {
      const c = data.changes;
      subject = { ...subject, ...(c.name !== undefined ? { name: c.name } : {}), ...(c.path !== undefined ? { path: c.path } : {}), ...(c.visibility !== undefined ? { visibility: c.visibility } : {}), ...(data.path_with_namespace ? { pathWithNamespace: data.path_with_namespace } : {}), updatedAt: occurredAt };
    } else if (subject && type === 'ProjectTransferred') {
      subject = { ...subject, namespaceId: data.namespace_id, pathWithNamespace: data.path_with_namespace, ...(data.visibility ? { visibility: data.visibility } : {}), updatedAt: occurredAt };
    } else if (subject) {
      subject = { ...subject, updatedAt: occurredAt };
    }
  }
  return subject;
}

export interface UserSubject extends Dated {
  readonly id: number;
  readonly name: string;
  readonly username: string;
  readonly email: string;
}

/** A user as its stream left it (UserCreated, then UserProfileUpdated changes). */
export function userOf(history: readonly Logged[]): UserSubject | undefined {
  let subject: UserSubject | undefined;
  for (const { type, data, occurredAt } of history) {
    if (type === 'UserCreated') subject = { id: data.id, name: data.name, username: data.username, email: data.email, createdAt: occurredAt, updatedAt: occurredAt };
    else if (subject && type === 'UserProfileUpdated') subject = { ...subject, ...pick(data.changes, ['name', 'username', 'email']), updatedAt: occurredAt };
    else if (subject) subject = { ...subject, updatedAt: occurredAt };
  }
  return subject;
}

export interface GroupSubject extends Dated {
  readonly id: number;
  readonly name: string;
  readonly path: string;
  readonly fullPath: string;
}

export interface KeySubject extends Dated {
  readonly id: number;
  readonly key: string;
  readonly userId: number | null;
}

/** A deploy key as its stream left it: its links are other rows (DeployKeysProject), which do not touch the key's updated_at. */
export function deployKeyOf(history: readonly Logged[]): KeySubject | undefined {
  let subject: KeySubject | undefined;
  for (const { type, data, occurredAt } of history) {
    if (type === 'DeployKeyCreated') subject = { id: data.id, key: data.key, userId: data.user_id, createdAt: occurredAt, updatedAt: occurredAt };
    else if (subject && type === 'DeployKeyTitleChanged') subject = { ...subject, updatedAt: occurredAt };
  }
  return subject;
}

/** A user's SSH key as its stream left it: added, never changed (GitLab's API cannot edit a key). */
export function userSshKeyOf(history: readonly Logged[]): KeySubject | undefined {
  const added = history.find((event) => event.type === 'UserSshKeyAdded');
  return added ? { id: added.data.id, key: added.data.key, userId: added.data.user_id, createdAt: added.occurredAt, updatedAt: added.occurredAt } : undefined;
}

/** A group as its stream left it (GroupCreated, then GroupUpdated). */
export function groupOf(history: readonly Logged[]): GroupSubject | undefined {
  let subject: GroupSubject | undefined;
  for (const { type, data, occurredAt } of history) {
    if (type === 'GroupCreated') subject = { id: data.id, name: data.name, path: data.path, fullPath: data.full_path, createdAt: occurredAt, updatedAt: occurredAt };
    else if (subject && type === 'GroupUpdated') subject = { ...subject, ...pick(data.changes, ['name', 'path']), fullPath: data.full_path, updatedAt: occurredAt };
    else if (subject) subject = { ...subject, updatedAt: occurredAt };
  }
  return subject;
}

export interface MembershipSubject extends Dated {
  readonly accessLevel: number;
}

/** One user's membership in a members stream: added (or approved) when, changed when, at which level. */
export function membershipOf(history: readonly Logged[], userId: number): MembershipSubject | undefined {
  let subject: MembershipSubject | undefined;
  for (const { type, data, occurredAt } of history) {
    if (data.user_id !== userId) continue;
    if (type === 'MemberAdded' || type === 'AccessRequestApproved') subject = { accessLevel: data.access_level, createdAt: occurredAt, updatedAt: occurredAt };
    else if (subject && type === 'MemberUpdated') subject = { ...subject, accessLevel: data.access_level, updatedAt: occurredAt };
  }
  return subject;
}

function pick(changes: Record<string, unknown>, keys: readonly string[]) {
  return Object.fromEntries(keys.filter((k) => changes[k] !== undefined).map((k) => [k, changes[k]]));
}

// ───────────────────────────── Payloads ─────────────────────────────

/** The project's owner as SystemHooksService#project_data shows it: a user's name and email, or a group's name and "". */
export interface OwnerFacts {
  readonly name: string | null;
  readonly email: string;
}

/** project_create / project_destroy / project_rename / project_transfer / project_update. */
export function projectEventData(event: string, p: ProjectSubject, owner: OwnerFacts, oldPathWithNamespace?: string) {
  return {
    event_name: event,
    ...dates(p),
    name: p.name,
    path: p.path,
    path_with_namespace: p.pathWithNamespace,
    project_id: p.id,
    owner_name: owner.name,
    owner_email: owner.email,
    project_visibility: p.visibility,
    ...(oldPathWithNamespace !== undefined ? { old_path_with_namespace: oldPathWithNamespace } : {}),
  };
}

/** user_create / user_destroy / user_rename (with old_username). */
export function userEventData(event: string, u: UserSubject, oldUsername?: string) {
  return {
    event_name: event,
    ...dates(u),
    name: u.name,
    email: u.email,
    user_id: u.id,
    username: u.username,
    ...(oldUsername !== undefined ? { old_username: oldUsername } : {}),
  };
}

/**
 * A Key's create and destroy (Key#post_create_hook, #post_destroy_hook): the event named for
 * the model's class, so a deploy key's are `deploykey_create` and `deploykey_destroy`; the
 * key's owner's username when it has one.
 */
export function keyEventData(event: string, k: KeySubject, username: string | undefined) {
  return { event_name: event, ...dates(k), key: k.key, id: k.id, ...(username !== undefined ? { username } : {}) };
}

/** group_create / group_destroy / group_rename (with old_path, full_path, old_full_path). A group has no owner user. */
export function groupEventData(event: string, g: GroupSubject, renamedFrom?: GroupSubject) {
  return {
    event_name: event,
    ...dates(g),
    name: g.name,
    path: g.path,
    group_id: g.id,
    owner_name: null,
    owner_email: null,
    ...(renamedFrom ? { old_path: renamedFrom.path, full_path: g.fullPath, old_full_path: renamedFrom.fullPath } : {}),
  };
}

const human = (level: number) => ROLE_NAMES[level] ?? String(level);

/** user_add_to_team / user_remove_from_team / user_update_for_team. */
export function projectMemberEventData(event: string, m: MembershipSubject, p: ProjectSubject, u: UserSubject) {
  return {
    event_name: event,
    ...dates(m),
    project_name: p.name,
    project_path: p.path,
    project_path_with_namespace: p.pathWithNamespace,
    project_id: p.id,
    user_username: u.username,
    user_name: u.name,
    user_email: u.email,
    user_id: u.id,
    access_level: human(m.accessLevel),
    project_visibility: p.visibility,
  };
}

/** user_add_to_group / user_remove_from_group / user_update_for_group. */
export function groupMemberEventData(event: string, m: MembershipSubject, g: GroupSubject, u: UserSubject) {
  return {
    event_name: event,
    ...dates(m),
    group_name: g.name,
    group_path: g.path,
    group_id: g.id,
    user_username: u.username,
    user_name: u.name,
    user_email: u.email,
    user_id: u.id,
    group_access: human(m.accessLevel),
  };
}
