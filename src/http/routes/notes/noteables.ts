import type { Context } from 'hono';
import type { Viewer } from '../../../domain/access.js';
import { forbidden, notFound, recordNotFound } from '../../../domain/errors.js';
import type { NoteableData, NoteableType } from '../../../domain/notes/events.js';
import { licensed } from '../../../domain/policy/licensed.js';
import { findEpic, findEpicById } from '../../../projections/epics/queries.js';
import { canOnIssue, findIssue } from '../../../projections/issues/queries.js';
import { findMergeRequest } from '../../../projections/merge-requests/queries.js';
import { visibleSnippet } from '../../../projections/snippets/queries.js';
import { mergeRequestSystemNoteViews, userNotes, type NoteView } from '../../../projections/notes/queries.js';
import { resolveCommit } from '../../../projections/repository/queries.js';
import { appContext, today, type Auth } from '../../kernel/context.js';
import { pathId } from '../../kernel/params.js';
import { issueSystemNoteViews } from '../../../projections/notes/issue-system-notes.js';
import { crossReferenceNoteViews, epicSystemNoteViews } from '../../../projections/cross-references/queries.js';
import { userGroup, userProject, type ProjectScope } from '../../kernel/scope.js';
import { canOnMergeRequest } from '../merge-requests/find.js';

/**
 * The registry of noteable kinds: what the notes, discussions and award emoji routes need of
 * a noteable, whatever it is — how to find it in the caller's scope (GitLab's `find_noteable`),
 * the caller's abilities on it (NotePolicy / IssuablePolicy delegating to the project or
 * group), its notes (user notes, and system notes from its stream). An area plugs in with one
 * entry (docs/notes.md says how the issues and snippets areas do).
 */

/** The abilities the routes ask of a noteable (GitLab's names). */
export type NoteAbility = 'create_note' | 'admin_note' | 'resolve_note' | 'award_emoji' | 'set_note_created_at';

export interface Noteable {
  readonly type: NoteableType;
  /** What its notes' events carry. */
  readonly data: NoteableData;
  readonly iid: number | null;
  /** Its title (a commit's message), which a note's chat notification shows. */
  readonly title: string;
  readonly authorId: number | null;
  readonly viewer: Viewer | null;
  /** A confidential issue: its notes are confidential notes (feeds, chat). */
  readonly confidential?: boolean;
  /** The caller's ability on the noteable (a note's own author rules are asked on top: NotePolicy). */
  can(ability: NoteAbility): boolean;
  /** Its notes in created order: user notes and the system notes its events give. */
  notes(): Promise<NoteView[]>;
  /** A merge request's versions validate diff positions; other noteables take no position. */
  readonly mergeRequest?: { readonly id: number; readonly iid: number; readonly projectId: number };
}

export interface NoteableKind {
  readonly type: NoteableType;
  /** `projects` or `groups`: the scope `:id` names. */
  readonly parent: 'projects' | 'groups';
  /** The path segment(s) after `/:id/` (`merge_requests`, `repository/commits`, `epics`). */
  readonly path: string;
  /** Finds the noteable the path names (`:noteable_id`, or the route's `idParam`) within the caller's scope, or GitLab's 404. */
  find(c: Context, auth: Auth, idParam?: string): Promise<Noteable>;
}

const projectNoteable = (projectId: number) => ({ project_id: projectId, group_id: null });

export const mergeRequestNoteables: NoteableKind = {
  type: 'MergeRequest',
  parent: 'projects',
  path: 'merge_requests',
  async find(c, auth, idParam = 'noteable_id') {
    const project = await userProject(c, auth);
    const { db } = appContext(c);
    const iid = pathId(c, idParam);
    const row = iid === null ? undefined : await findMergeRequest(db, project.row.id, iid);
    // NotesFinder: MergeRequestsFinder's merge requests of the project the caller may read, `find_by!(iid:)`.
    if (!row || !canOnMergeRequest(project, row, 'read_merge_request')) throw recordNotFound('Merge Request');
    // IssuablePolicy: `locked & ~is_project_member` prevents writing notes, resolving and awarding.
    const locked = row.discussion_locked === true && project.role === null;
    const viewerId = project.viewer?.id;
    return {
      type: 'MergeRequest',
      data: { noteable_type: 'MergeRequest', noteable_id: row.id, commit_id: null, ...projectNoteable(project.row.id) },
      iid: row.iid,
      title: row.title,
      authorId: row.author_id,
      viewer: project.viewer,
      can: (ability) =>
        ability === 'resolve_note'
          ? // Discussion#can_resolve?: the merge request's author, or resolve_note on the project.
            !locked && viewerId !== undefined && (row.author_id === viewerId || project.can('resolve_note'))
          : projectAbilities(project, locked)(ability),
      notes: async () => {
        const [user, system, mentions] = await Promise.all([
          userNotes(db, { type: 'MergeRequest', id: row.id, iid: row.iid }),
          mergeRequestSystemNoteViews(db, row, project.row.path_with_namespace),
          crossReferenceNoteViews(db, { type: 'MergeRequest', row }, project.viewer, today(c)),
        ]);
        return mergeInCreatedOrder(user, mergeInCreatedOrder(system, mentions));
      },
      mergeRequest: { id: row.id, iid: row.iid, projectId: project.row.id },
    };
  },
};

/**
 * The abilities on a project's noteable: the project's (IssuablePolicy, ProjectSnippetPolicy and
 * CommitPolicy delegate to it), none to write on a locked one for a non-member; resolving is
 * a merge request's only (it asks on top).
 */
function projectAbilities(project: ProjectScope, locked: boolean): (ability: NoteAbility) => boolean {
  return (ability) => {
    if (locked && ability !== 'set_note_created_at') return false;
    return ability === 'resolve_note' ? false : project.can(ability);
  };
}

export const issueNoteables: NoteableKind = {
  type: 'Issue',
  parent: 'projects',
  path: 'issues',
  async find(c, auth, idParam = 'noteable_id') {
    const project = await userProject(c, auth);
    const { db } = appContext(c);
    const iid = pathId(c, idParam);
    const row = iid === null ? undefined : await findIssue(db, project.row.id, iid);
    // NotesFinder: IssuesFinder's issues of the project the caller may read (confidential ones included), `find_by!(iid:)`.
    if (!row || !canOnIssue(project.subject, row, 'read_issue')) throw recordNotFound('Issue');
    return {
      type: 'Issue',
      data: { noteable_type: 'Issue', noteable_id: row.id, commit_id: null, ...projectNoteable(project.row.id) },
      iid: row.iid,
      title: row.title,
      authorId: row.author_id,
      viewer: project.viewer,
      confidential: row.confidential,
      can: projectAbilities(project, row.discussion_locked === true && project.role === null),
      notes: async () => {
        const [user, system, mentions] = await Promise.all([userNotes(db, { type: 'Issue', id: row.id, iid: row.iid }), issueSystemNoteViews(db, row), crossReferenceNoteViews(db, { type: 'Issue', row }, project.viewer, today(c))]);
        return mergeInCreatedOrder(user, mergeInCreatedOrder(system, mentions));
      },
    };
  },
};

/** A project's snippets: `:noteable_id` is the snippet's id (SnippetsFinder's snippets of the project the caller may read). */
export const snippetNoteables: NoteableKind = {
  type: 'Snippet',
  parent: 'projects',
  path: 'snippets',
  async find(c, auth, idParam = 'noteable_id') {
    const project = await userProject(c, auth);
    const { db } = appContext(c);
    const id = pathId(c, idParam);
    const snippet = id === null ? null : await visibleSnippet(db, project.viewer, id, project.row.id);
    if (!snippet) throw recordNotFound('Snippet');
    return {
      type: 'Snippet',
      data: { noteable_type: 'Snippet', noteable_id: snippet.id, commit_id: null, ...projectNoteable(project.row.id) },
      iid: null,
      title: snippet.title,
      authorId: snippet.author_id,
      viewer: project.viewer,
      can: projectAbilities(project, false),
      notes: () => userNotes(db, { type: 'Snippet', id: snippet.id, iid: null }),
    };
  },
};

export const commitNoteables: NoteableKind = {
  type: 'Commit',
  parent: 'projects',
  path: 'repository/commits',
  async find(c, auth, idParam = 'noteable_id') {
    const project = await userProject(c, auth);
    const { db } = appContext(c);
    // NotesFinder: `project.commit(id)`, then `can?(:read_commit)` (CommitPolicy: download_code).
    const commit = project.can('download_code') ? await resolveCommit(db, project.row.id, c.req.param(idParam) ?? '') : undefined;
    if (!commit) throw notFound('Commit');
    return {
      type: 'Commit',
      data: { noteable_type: 'Commit', noteable_id: null, commit_id: commit.sha, ...projectNoteable(project.row.id) },
      iid: null,
      title: commit.message,
      authorId: null,
      viewer: project.viewer,
      can: projectAbilities(project, false),
      notes: () => userNotes(db, { type: 'Commit', projectId: project.row.id, sha: commit.sha }),
    };
  },
};

/** EE's epics: `:noteable_id` is the epic's id (NotesFinder finds epics by id), in a group with the epics feature. */
export const epicNoteables: NoteableKind = {
  type: 'Epic',
  parent: 'groups',
  path: 'epics',
  find: (c, auth, idParam = 'noteable_id') => epicNoteable(c, auth, idParam, 'id'),
};

/** The epic the path names by id (the notes API) or by iid (`:epic_iid`, the award emoji API), as a noteable. */
export async function epicNoteable(c: Context, auth: Auth, idParam: string, by: 'id' | 'iid'): Promise<Noteable> {
  const group = await userGroup(c, auth);
  const { db, config } = appContext(c);
  if (!licensed(config.plan, 'epics')) throw forbidden();
  const id = pathId(c, idParam);
  const epic = id === null ? undefined : by === 'id' ? await findEpicById(db, group.viewer, id) : await findEpic(db, group.viewer, group.row.id, id);
  if (!epic || epic.group_id !== group.row.id || !group.can('read_epic')) throw recordNotFound('Epic');
  const signedIn = group.viewer !== null;
  return {
    type: 'Epic',
    data: { noteable_type: 'Epic', noteable_id: epic.id, commit_id: null, project_id: null, group_id: group.row.id },
    iid: epic.iid,
    title: epic.title,
    authorId: epic.author_id,
    viewer: group.viewer,
    can: (ability) => {
      switch (ability) {
        // EpicPolicy: a signed-in reader comments and awards.
        case 'create_note':
        case 'award_emoji':
          return signedIn;
        case 'admin_note':
          return group.can('admin_group');
        case 'resolve_note':
          return false;
        case 'set_note_created_at':
          return group.can('admin_group');
      }
    },
    notes: async () => {
      const [user, system] = await Promise.all([userNotes(db, { type: 'Epic', id: epic.id, iid: null }), epicSystemNoteViews(db, epic, group.viewer)]);
      return mergeInCreatedOrder(user, system);
    },
  };
}

/** User notes and system notes, merged in created order (each list is in created order already). */
export function mergeInCreatedOrder(a: readonly NoteView[], b: readonly NoteView[]): NoteView[] {
  return [...a, ...b].sort((x, y) => (x.createdAt < y.createdAt ? -1 : x.createdAt > y.createdAt ? 1 : x.id - y.id));
}

/** The kinds the notes API serves (GitLab's NOTEABLE_TYPES of API::Notes, and EE's epics). */
export const NOTES_KINDS: readonly NoteableKind[] = [issueNoteables, mergeRequestNoteables, snippetNoteables, epicNoteables];
/** The kinds the discussions API serves (API::Discussions, and EE's epics). */
export const DISCUSSION_KINDS: readonly NoteableKind[] = [issueNoteables, snippetNoteables, mergeRequestNoteables, commitNoteables, epicNoteables];
