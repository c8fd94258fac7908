import type { Db } from '../../database/database.js';
import { closingIssueReferences } from '../../domain/issues/references.js';
import type { NoteableData } from '../../domain/notes/events.js';
import type { CommitDetail } from '../../domain/repository/decider.js';
import { CROSS_REFERENCES_PER_EVENT, mentionedReferences, type CrossReferenceAction, type MentionedType, type MentionerType } from '../../domain/notes/cross-references.js';
import { defineProjector } from '../projector.js';
import { referencedTargets, type MentionedTarget } from './queries.js';
import type { CrossReferencesTable } from './tables.js';

/** The mentioner of a text: an issue, a merge request (by id) or a commit (by SHA), in a project. */
interface Mentioner {
  readonly type: MentionerType;
  readonly id: number | null;
  readonly sha: string | null;
  readonly projectId: number;
}

/**
 * Gitlab::ReferenceExtractor's issues and merge requests of texts written in a project; the
 * mentioner itself left out (Mentionable#referenced_mentionables).
 */
async function mentionedBy(trx: Db, mentioner: Mentioner, texts: readonly (string | null | undefined)[]): Promise<MentionedTarget[]> {
  const targets = await referencedTargets(trx, mentioner.projectId, mentionedReferences(...texts));
  return targets.filter((t) => !(t.type === mentioner.type && t.id === mentioner.id));
}

/**
 * A mention: who mentions, in which texts, and (`closes`) texts whose closed issues it does not
 * mention; a pushed commit's, the author its event recorded (`author`: a user's id or null, the
 * pusher's; absent when the event did not record it).
 */
interface Mention {
  readonly mentioner: Mentioner;
  readonly texts: readonly (string | null | undefined)[];
  readonly closes?: string;
  readonly author?: number | null;
}

/** The rows of one event: each mentioner's targets, the k-th on a target numbered k. */
async function record(trx: Db, eventId: string, mentions: readonly Mention[]) {
  const rows: CrossReferencesTable[] = [];
  const ordinals = new Map<string, number>();
  for (const { mentioner, texts, closes, author } of mentions) {
    const closed = new Set(closes === undefined ? [] : (await referencedTargets(trx, mentioner.projectId, closingIssueReferences(closes).map((ref) => ({ ...ref, type: 'Issue' as const })))).map((t) => t.id));
    for (const target of await mentionedBy(trx, mentioner, texts)) {
      if (target.type === 'Issue' && closed.has(target.id)) continue;
      const key = `${target.type} ${target.id}`;
      const ordinal = ordinals.get(key) ?? 0;
      if (ordinal >= CROSS_REFERENCES_PER_EVENT) continue;
      ordinals.set(key, ordinal + 1);
      rows.push({
        event_id: eventId,
        target_type: target.type,
        target_id: target.id,
        ordinal,
        action: 'cross_reference',
        target_project_id: target.projectId,
        mentioner_type: mentioner.type,
        mentioner_id: mentioner.id,
        mentioner_sha: mentioner.sha,
        mentioner_project_id: mentioner.projectId,
        other_epic_id: null,
        author_id: author ?? null,
        author_recorded: author !== undefined,
      });
    }
  }
  if (rows.length > 0) await trx.insertInto('cross_references').values(rows).onConflict((oc) => oc.doNothing()).execute();
}

/** Whether texts reference anything, so that their handler reads the projects, issues and merge requests they may name. */
const references = (...texts: readonly (string | null | undefined)[]) => mentionedReferences(...texts).length > 0;

const issuable = (type: 'Issue' | 'MergeRequest', data: { id: number; project_id: number }): Mentioner => ({ type, id: data.id, sha: null, projectId: data.project_id });

/**
 * A push's commits, oldest first (GitLab's ProcessCommitWorker per commit): each commit's message
 * mentions; on the default branch (as the project has it when projected), not the issues it
 * closes (`commit.create_cross_references!(author, closed_issues)`: those get "closed via commit").
 */
async function pushed(trx: Db, data: { project_id: number; branch: string; commits: readonly string[]; commit_details: readonly CommitDetail[] | null }): Promise<Mention[]> {
  const details = data.commit_details ?? [];
  if (details.length === 0) return [];
  const project = await trx.selectFrom('projects').select('default_branch').where('id', '=', data.project_id).executeTakeFirst();
  const onDefault = project !== undefined && (project.default_branch === null || project.default_branch === data.branch);
  return details
    .map((detail, k) => ({
      mentioner: { type: 'Commit' as const, id: null, sha: data.commits[k]!, projectId: data.project_id },
      texts: [detail.message],
      ...(onDefault ? { closes: detail.message } : {}),
      ...(detail.author_id === undefined ? {} : { author: detail.author_id }),
    }))
    .reverse();
}

const deleted = (type: MentionedType, id: number) => async (trx: Db) => {
  await trx
    .deleteFrom('cross_references')
    .where((eb) => eb.or([eb.and([eb('target_type', '=', type), eb('target_id', '=', id)]), eb.and([eb('mentioner_type', '=', type), eb('mentioner_id', '=', id)])]))
    .execute();
};

/**
 * Inline: the API reads what it just wrote. Issues and merge requests as they are opened or
 * their title or description change (Issues/MergeRequests::CreateService and UpdateService:
 * create_cross_references!, create_new_cross_references!), comments as they are written or
 * edited (Notes::PostProcessService, Notes::UpdateService; a comment's mentioner is its
 * noteable), and pushed commits (ProcessCommitWorker) mention the issues and merge requests
 * their texts reference; an issue link made or removed gives both issues a note (EE's
 * relate_issue, unrelate_issue). Which of them shows, to whom, is decided when read (./queries.ts).
 */
export const crossReferencesProjector = defineProjector({
  name: 'cross_references',
  // 2: a commit pushed to the default branch does not mention the issues it closes. The pushed
  // commits' authors (migration 0077) need no rebuild: every row before it is of an event that did not record them.
  version: 2,
  tables: ['cross_references'],
  reads: ['projects', 'issues', 'merge_requests'],
  // A mention names the issue or merge request its reference resolves to when written, and
  // none if there was none: a replay resolves it among the rows of that moment too.
  readsNow: (event) => {
    switch (event.type) {
      case 'IssueOpened':
      case 'MergeRequestOpened':
        return references(event.data.title, event.data.description);
      case 'IssueUpdated':
      case 'MergeRequestUpdated':
        return references(event.data.changes.title, event.data.changes.description);
      case 'NoteAdded':
      case 'NoteEdited':
        return noteMentions(event.data, event.data.body).some((m) => references(...m.texts));
      case 'BranchCreated':
      case 'BranchUpdated':
        return (event.data.commit_details ?? []).some((detail) => references(detail.message));
      default:
        return false;
    }
  },
  on: {
    IssueOpened: async ({ data, eventId }, trx) => record(trx, eventId, [{ mentioner: issuable('Issue', data), texts: [data.title, data.description] }]),
    IssueUpdated: async ({ data, eventId }, trx) => record(trx, eventId, [{ mentioner: issuable('Issue', data), texts: [data.changes.title, data.changes.description] }]),
    MergeRequestOpened: async ({ data, eventId }, trx) => record(trx, eventId, [{ mentioner: issuable('MergeRequest', data), texts: [data.title, data.description] }]),
    MergeRequestUpdated: async ({ data, eventId }, trx) => record(trx, eventId, [{ mentioner: issuable('MergeRequest', data), texts: [data.changes.title, data.changes.description] }]),
    NoteAdded: async ({ data, eventId }, trx) => record(trx, eventId, noteMentions(data, data.body)),
    NoteEdited: async ({ data, eventId }, trx) => record(trx, eventId, noteMentions(data, data.body)),
    BranchCreated: async ({ data, eventId }, trx) => record(trx, eventId, await pushed(trx, data)),
    BranchUpdated: async ({ data, eventId }, trx) => record(trx, eventId, await pushed(trx, data)),
    IssueLinkCreated: async ({ data, eventId }, trx) => link(trx, eventId, data, 'relate'),
    IssueLinkDeleted: async ({ data, eventId }, trx) => link(trx, eventId, data, 'unrelate'),
    IssueAddedToEpic: async ({ data, eventId }, trx) => {
      const previous = data.previous_epic_id;
      // EpicIssues::CreateService#create_notes: a move writes on the epic it comes to, then on the one it left.
      const rows = previous === null ? [epicRow(eventId, data, data.epic_id, 0, 'epic_issue_added', null)] : [epicRow(eventId, data, data.epic_id, 0, 'epic_issue_moved_from', previous), epicRow(eventId, data, previous, 1, 'epic_issue_moved_to', data.epic_id)];
      await trx.insertInto('cross_references').values(rows).onConflict((oc) => oc.doNothing()).execute();
    },
    IssueRemovedFromEpic: async ({ data, eventId }, trx) =>
      trx.insertInto('cross_references').values(epicRow(eventId, data, data.epic_id, 0, 'epic_issue_removed', null)).onConflict((oc) => oc.doNothing()).execute(),
  },
  cascades: {
    IssueDeleted: async ({ data }, trx) => deleted('Issue', data.id)(trx),
    MergeRequestDeleted: async ({ data }, trx) => deleted('MergeRequest', data.id)(trx),
    EpicDeleted: async ({ data }, trx) => trx.deleteFrom('cross_references').where('target_type', '=', 'Epic').where('target_id', '=', data.id).execute(),
    ProjectDeleted: async ({ data }, trx) =>
      trx
        .deleteFrom('cross_references')
        .where((eb) => eb.or([eb('target_project_id', '=', data.id), eb('mentioner_project_id', '=', data.id)]))
        .execute(),
  },
});

/** IssueLinks::CreateService / DestroyService#create_notes: a note on the source issue, then one on the target. */
async function link(trx: Db, eventId: string, data: { source_id: number; source_project_id: number; target_id: number; target_project_id: number }, action: 'relate' | 'unrelate') {
  const row = (ordinal: number, target: readonly [number, number], other: readonly [number, number]): CrossReferencesTable => ({
    event_id: eventId,
    target_type: 'Issue',
    target_id: target[0],
    ordinal,
    action,
    target_project_id: target[1],
    mentioner_type: 'Issue',
    mentioner_id: other[0],
    mentioner_sha: null,
    mentioner_project_id: other[1],
    other_epic_id: null,
    author_id: null,
    author_recorded: false,
  });
  const source = [data.source_id, data.source_project_id] as const;
  const target = [data.target_id, data.target_project_id] as const;
  await trx.insertInto('cross_references').values([row(0, source, target), row(1, target, source)]).onConflict((oc) => oc.doNothing()).execute();
}

/** A note on an epic about one of its issues (EE's epic_issue, epic_issue_moved). */
const epicRow = (eventId: string, issue: { id: number; project_id: number }, epicId: number, ordinal: number, action: CrossReferenceAction, otherEpicId: number | null): CrossReferencesTable => ({
  event_id: eventId,
  target_type: 'Epic',
  target_id: epicId,
  ordinal,
  action,
  target_project_id: null,
  mentioner_type: 'Issue',
  mentioner_id: issue.id,
  mentioner_sha: null,
  mentioner_project_id: issue.project_id,
  other_epic_id: otherEpicId,
  author_id: null,
  author_recorded: false,
});

/** A comment mentions as its noteable (Note delegates local_reference to it): an issue's, a merge request's or a commit's. */
function noteMentions(data: NoteableData, body: string): { mentioner: Mentioner; texts: string[] }[] {
  const { noteable_type: type, noteable_id: id, commit_id: sha, project_id: projectId } = data;
  if (projectId === null) return [];
  if ((type === 'Issue' || type === 'MergeRequest') && id !== null) return [{ mentioner: { type, id, sha: null, projectId }, texts: [body] }];
  if (type === 'Commit' && sha !== null) return [{ mentioner: { type, id: null, sha, projectId }, texts: [body] }];
  return [];
}
