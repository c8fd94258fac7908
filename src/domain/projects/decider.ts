import { type Decider, unhandled } from '../decider.js';
import { conflict, notFound, serviceError } from '../errors.js';
import { sameUpload, type UploadRef } from '../uploads.js';
import type { ProjectEvent } from './events.js';
import { decideFork, type ForkCommand } from './forks.js';
import { type ProjectChanges, type ProjectNamespace, type ProjectSettings, settingsOf } from './settings.js';
import { validate } from './validation.js';

/**
 * A project: its settings, archiving, stars and removal. One aggregate per project, keyed by
 * its id (allocated before the project exists), stream `project-<id>` (./events.ts).
 */

// ───────────────────────────── State ─────────────────────────────

export interface ProjectState {
  /** The stream's key. */
  readonly id: number;
  readonly exists: boolean;
  readonly deleted: boolean;
  readonly pendingDelete: boolean;
  readonly namespaceId: number | null;
  readonly settings: ProjectSettings | null;
  readonly pathWithNamespace: string | null;
  readonly archived: boolean;
  readonly defaultBranch: string | null;
  readonly starredBy: ReadonlySet<number>;
  /** The uploaded avatar, if any. */
  readonly avatar: UploadRef | null;
  /** The groups the project is shared with: group id → the link's id. */
  readonly groupLinks: ReadonlyMap<number, number>;
  /** The project it is a fork of (./forks.ts). */
  readonly forkedFrom: number | null;
}

// ───────────────────────────── Commands ─────────────────────────────


export interface CreateProjectCommand {
  readonly type: 'CreateProject';
  readonly creatorId: number;
  readonly namespace: ProjectNamespace;
  readonly settings: ProjectSettings;
  readonly initializeWithReadme: boolean;
  /** The branch the README goes to (GitLab 12: master). */
  readonly defaultBranch: string;
  /** What the claims table said before deciding (GitLab reports every validation error at once). */
  readonly taken: { readonly name: boolean; readonly path: boolean };
  /** Personal namespace only: the creator's projects_limit and personal project count. */
  readonly personalLimit: { readonly limit: number; readonly count: number } | null;
  readonly avatar?: UploadRef | undefined;
  /** POST /projects/:id/fork: the project it is a fork of. */
  readonly forkedFrom?: number | undefined;
}

/** POST /projects/:id/share: the caller may read the group (checked before, as GitLab's service does). */
export interface ShareProjectWithGroupCommand {
  readonly type: 'ShareProjectWithGroup';
  /** The new link's id (project_group_links_id_seq). */
  readonly linkId: number;
  readonly groupId: number;
  readonly groupAccess: number;
  readonly expiresAt: string | null;
  /** The project's namespace and its ancestors (its traversal ids): none of them can be shared with. */
  readonly namespaceTraversalIds: readonly number[];
  /** The project's full path as the read model has it now (the audit's target; a group rename moves it). */
  readonly pathWithNamespace: string;
}

export type ProjectCommand =
  | CreateProjectCommand
  | {
      readonly type: 'UpdateProject';
      readonly changes: ProjectChanges;
      readonly namespace: ProjectNamespace;
      readonly taken: { readonly name: boolean; readonly path: boolean };
      /** The repository's branches as the transaction read them (the repository is their one source of truth). */
      readonly branches: readonly string[];
      /** A new avatar (its bytes stored beside the events, in the same transaction). */
      readonly avatar?: UploadRef | undefined;
    }
  | { readonly type: 'ArchiveProject' }
  | { readonly type: 'UnarchiveProject' }
  | { readonly type: 'StarProject'; readonly userId: number }
  | { readonly type: 'UnstarProject'; readonly userId: number }
  | ShareProjectWithGroupCommand
  | { readonly type: 'UnshareProjectWithGroup'; readonly groupId: number; readonly pathWithNamespace: string }
  | { readonly type: 'ScheduleProjectDeletion' }
  | { readonly type: 'DeleteProject' }
  | ForkCommand;

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (id: number): ProjectState => ({
  id,
  exists: false,
  deleted: false,
  pendingDelete: false,
  namespaceId: null,
  settings: null,
  pathWithNamespace: null,
  archived: false,
  defaultBranch: null,
  starredBy: new Set(),
  avatar: null,
  groupLinks: new Map(),
  forkedFrom: null,
});

function evolve(state: ProjectState, event: ProjectEvent): ProjectState {
  switch (event.type) {
    case 'ProjectCreated': {
      const d = event.data;
      return {
        ...state,
        exists: true,
        namespaceId: d.namespace_id,
        settings: settingsOf(d),
        pathWithNamespace: d.path_with_namespace,
        defaultBranch: d.default_branch,
      };
    }
    case 'ProjectUpdated': {
      const { default_branch, ...changes } = event.data.changes;
      return {
        ...state,
        settings: { ...state.settings!, ...changes },
        pathWithNamespace: event.data.path_with_namespace ?? state.pathWithNamespace,
        defaultBranch: default_branch ?? state.defaultBranch,
      };
    }
    case 'ProjectArchived':
      return { ...state, archived: true };
    case 'ProjectUnarchived':
      return { ...state, archived: false };
    case 'ProjectStarred':
      return { ...state, starredBy: new Set([...state.starredBy, event.data.user_id]) };
    case 'ProjectUnstarred': {
      const starredBy = new Set(state.starredBy);
      starredBy.delete(event.data.user_id);
      return { ...state, starredBy };
    }
    case 'ProjectDeletionScheduled':
      return { ...state, pendingDelete: true };
    case 'ProjectDeleted':
      return { ...state, exists: false, deleted: true, pendingDelete: false };
    case 'ProjectAvatarChanged':
      return { ...state, avatar: event.data.avatar };
    case 'ProjectGroupLinkCreated':
      return { ...state, groupLinks: new Map([...state.groupLinks, [event.data.group_id, event.data.link_id]]) };
    case 'ProjectGroupLinkDeleted': {
      const groupLinks = new Map(state.groupLinks);
      groupLinks.delete(event.data.group_id);
      return { ...state, groupLinks };
    }
    case 'ProjectForkLinked':
      return { ...state, forkedFrom: event.data.forked_from_project_id };
    case 'ProjectForkUnlinked':
      return { ...state, forkedFrom: null };
    case 'ProjectTransferred': {
      const { namespace_id, path_with_namespace, visibility } = event.data;
      const settings = visibility === null ? state.settings : { ...state.settings!, visibility };
      return { ...state, namespaceId: namespace_id, pathWithNamespace: path_with_namespace, settings };
    }
    default:
      return state;
  }
}

function decide(command: ProjectCommand, state: ProjectState): ProjectEvent[] {
  if (command.type === 'CreateProject') {
    if (state.exists || state.deleted) throw conflict('Project already exists');
    const { namespace, settings } = command;
    validate(settings, namespace, command.taken, command.personalLimit);
    const defaultBranch = command.initializeWithReadme ? command.defaultBranch : null;
    return [
      {
        type: 'ProjectCreated',
        data: {
          id: state.id,
          namespace_id: namespace.id,
          creator_id: command.creatorId,
          namespace_kind: namespace.kind,
          traversal_ids: namespace.traversal_ids,
          path_with_namespace: `${namespace.full_path}/${settings.path}`,
          name_with_namespace: `${namespace.full_name} / ${settings.name}`,
          readme: command.initializeWithReadme,
          default_branch: defaultBranch,
          ...settings,
        },
      },
      ...avatarChange(state.id, null, command.avatar),
      ...(command.forkedFrom === undefined ? [] : decideFork({ ...state, forkedFrom: null }, { type: 'LinkFork', forkedFromId: command.forkedFrom })),
    ];
  }
  // DeleteProject is how removals finish (the reactor, a group's removal): a project gone needs nothing.
  if (command.type === 'DeleteProject') {
    if (!state.exists) return [];
    return [{ type: 'ProjectDeleted', data: { id: state.id, namespace_id: state.namespaceId!, path_with_namespace: state.pathWithNamespace ?? '' } }];
  }
  if (!state.exists || !state.settings || state.pendingDelete) throw notFound('Project');
  const id = state.id;
  switch (command.type) {
    case 'UpdateProject':
      return [...update(state, command), ...avatarChange(id, state.avatar, command.avatar)];
    // GitLab: archiving an archived project (or unarchiving an active one) changes nothing.
    case 'ArchiveProject':
      return state.archived ? [] : [{ type: 'ProjectArchived', data: { id } }];
    case 'UnarchiveProject':
      return state.archived ? [{ type: 'ProjectUnarchived', data: { id } }] : [];
    // The API answers 304 when there is nothing to toggle; the decider just appends nothing.
    case 'StarProject':
      return state.starredBy.has(command.userId) ? [] : [{ type: 'ProjectStarred', data: { id, user_id: command.userId } }];
    case 'UnstarProject':
      return state.starredBy.has(command.userId) ? [{ type: 'ProjectUnstarred', data: { id, user_id: command.userId } }] : [];
    case 'ShareProjectWithGroup':
      return [share(state, command)];
    case 'UnshareProjectWithGroup': {
      const linkId = state.groupLinks.get(command.groupId);
      if (linkId === undefined) throw notFound('Group Link');
      return [{ type: 'ProjectGroupLinkDeleted', data: { id, link_id: linkId, group_id: command.groupId, path_with_namespace: command.pathWithNamespace } }];
    }
    case 'ScheduleProjectDeletion':
      return [{ type: 'ProjectDeletionScheduled', data: { id, path_with_namespace: state.pathWithNamespace ?? '' } }];
    case 'LinkFork':
    case 'UnlinkFork':
    case 'TransferProject':
      return decideFork(state, command);
    default:
      return unhandled(command);
  }
}

/** PUT /projects/:id's settings (the avatar aside). */
function update(state: ProjectState, command: Extract<ProjectCommand, { type: 'UpdateProject' }>): ProjectEvent[] {
  const id = state.id;
  const settings = state.settings!;
  const { default_branch, ...requested } = command.changes;
  const changes: Record<string, unknown> = changedFields(settings, requested);
  // GitLab (Projects::UpdateService): the new default branch must exist in the repository.
  if (default_branch !== undefined && default_branch !== state.defaultBranch) {
    if (!command.branches.includes(default_branch)) throw serviceError('Could not set the default branch');
    changes.default_branch = default_branch;
  }
  if (Object.keys(changes).length === 0) return [];
  const next: ProjectSettings = { ...settings, ...(changes as Partial<ProjectSettings>) };
  const taken = { name: changes.name !== undefined && command.taken.name, path: changes.path !== undefined && command.taken.path };
  // GitLab validates the visibility against the group only when it changes.
  validate(next, command.namespace, taken, null, changes.visibility !== undefined);
  const { full_path, full_name } = command.namespace;
  return [
    {
      type: 'ProjectUpdated',
      data: {
        id,
        changes: changes as ProjectChanges,
        path_with_namespace: `${full_path}/${next.path}`,
        name_with_namespace: `${full_name} / ${next.name}`,
        previous: {
          visibility: settings.visibility,
          path_with_namespace: `${full_path}/${settings.path}`,
          name_with_namespace: `${full_name} / ${settings.name}`,
        },
      },
    },
  ];
}

/**
 * ProjectGroupLink's validations, every failure in one sentence (GitLab: the service answers
 * `link.errors.full_messages.to_sentence` with 409): the group is not shared already, and it is
 * neither the project's group nor one of its ancestors (`different_group`).
 */
function share(state: ProjectState, command: ShareProjectWithGroupCommand): ProjectEvent {
  const { groupId } = command;
  const errors: string[] = [];
  if (state.groupLinks.has(groupId)) errors.push('Group already shared with this group');
  if (command.namespaceTraversalIds.includes(groupId)) errors.push('Project cannot be shared with the group it is in or one of its ancestors.');
  if (errors.length > 0) throw conflict(errors.join(' and '));
  return {
    type: 'ProjectGroupLinkCreated',
    data: {
      id: state.id,
      link_id: command.linkId,
      group_id: groupId,
      group_access: command.groupAccess,
      expires_at: command.expiresAt,
      path_with_namespace: command.pathWithNamespace,
    },
  };
}

/** A new avatar, unless it is the one the project has (same bytes, same name). */
const avatarChange = (id: number, current: UploadRef | null, avatar: UploadRef | undefined): ProjectEvent[] =>
  avatar && !sameUpload(current, avatar) ? [{ type: 'ProjectAvatarChanged', data: { id, avatar } }] : [];

function changedFields(settings: ProjectSettings, changes: Partial<ProjectSettings>): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (JSON.stringify(settings[key as keyof ProjectSettings]) !== JSON.stringify(value)) changed[key] = value;
  }
  return changed;
}

export const projectDecider: Decider<ProjectCommand, ProjectEvent, ProjectState, number> = { initialState, evolve, decide };
