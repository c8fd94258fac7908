import { issueDecider, type IssueRecord } from '../issues/decider.js';
import type { IssueEvent } from '../issues/events.js';
import { mergeRequestDecider, type MergeRequestRecord } from '../merge-requests/decider.js';
import type { MergeRequestEvent } from '../merge-requests/events.js';
import { snippetDecider, type SnippetEvent, type SnippetRecord } from '../snippets.js';
import type { Logged } from './payloads-system.js';

/**
 * An issuable as its own stream left it at the triggering event: GitLab builds hook data at
 * the moment of the change, so a lagging reactor must describe the issue, merge request or
 * snippet as it was then — also once it has been changed again or deleted. Each is its
 * decider's `evolve` over the stream, with what the hook data shows and the decider does not
 * keep (the times, as the projections keep them, and a few columns).
 */

interface Dated {
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

const EPOCH = new Date(0);

export interface IssueAsOf extends Dated {
  readonly id: number;
  readonly issue: IssueRecord;
  readonly discussionLocked: boolean | null;
  readonly closedAt: Date | null;
}

/** The issue after `history` (its stream, in order), or undefined when not opened or deleted by then. */
export function issueAsOf(id: number, history: readonly Logged[]): IssueAsOf | undefined {
  let state = issueDecider.initialState(id);
  let extra = { discussionLocked: null as boolean | null, closedAt: null as Date | null, createdAt: EPOCH, updatedAt: EPOCH };
  for (const logged of history) {
    const event = logged as unknown as IssueEvent;
    state = issueDecider.evolve(state, event);
    const at = logged.occurredAt;
    // As src/projections/issues/projector.ts keeps them.
    switch (event.type) {
      case 'IssueOpened': {
        const created = event.data.created_at === null ? at : new Date(event.data.created_at);
        extra = { discussionLocked: event.data.discussion_locked, closedAt: null, createdAt: created, updatedAt: created };
        break;
      }
      case 'IssueUpdated': {
        const locked = event.data.changes.discussion_locked;
        extra = { ...extra, ...(locked !== undefined ? { discussionLocked: locked } : {}), updatedAt: event.data.updated_at === null ? at : new Date(event.data.updated_at) };
        break;
      }
      case 'IssueClosed':
        extra = { ...extra, closedAt: at, updatedAt: at };
        break;
      case 'IssueReopened':
        extra = { ...extra, closedAt: null, updatedAt: at };
        break;
      case 'IssueMoved':
      case 'IssueTimeEstimateChanged':
      case 'IssueTimeSpent':
        extra = { ...extra, updatedAt: at };
        break;
      default:
        break;
    }
  }
  return state.issue ? { id, issue: state.issue, ...extra } : undefined;
}

export interface MergeRequestAsOf extends Dated {
  readonly id: number;
  readonly mergeRequest: MergeRequestRecord;
  readonly sourceProjectId: number;
  readonly mergeCommitSha: string | null;
  /** Who merged it (the projection's merged_by_id). */
  readonly mergeUserId: number | null;
}

/** The merge request after `history`, or undefined when not opened or deleted by then. */
export function mergeRequestAsOf(id: number, history: readonly Logged[]): MergeRequestAsOf | undefined {
  let state = mergeRequestDecider.initialState(id);
  let extra = { sourceProjectId: 0, mergeCommitSha: null as string | null, mergeUserId: null as number | null, createdAt: EPOCH, updatedAt: EPOCH };
  for (const logged of history) {
    const event = logged as unknown as MergeRequestEvent;
    state = mergeRequestDecider.evolve(state, event);
    const at = logged.occurredAt;
    // As src/projections/merge-requests/projector.ts keeps them: a mergeability check, a failed
    // rebase or a subscription is no edit.
    switch (event.type) {
      case 'MergeRequestOpened':
        extra = { sourceProjectId: event.data.source_project_id, mergeCommitSha: null, mergeUserId: null, createdAt: at, updatedAt: at };
        break;
      case 'MergeRequestMerged':
        extra = { ...extra, mergeCommitSha: event.data.merge_commit_sha, mergeUserId: event.data.by_id, updatedAt: at };
        break;
      case 'MergeRequestUpdated':
      case 'MergeRequestClosed':
      case 'MergeRequestReopened':
      case 'MergeRequestVersionRecorded':
      case 'MergeRequestTimeEstimateChanged':
      case 'MergeRequestTimeSpent':
        extra = { ...extra, updatedAt: at };
        break;
      default:
        break;
    }
  }
  return state.mergeRequest ? { id, mergeRequest: state.mergeRequest, ...extra } : undefined;
}

export interface SnippetAsOf extends Dated {
  readonly id: number;
  readonly snippet: SnippetRecord;
}

/** The snippet after `history`, or undefined when not created or deleted by then. */
export function snippetAsOf(id: number, history: readonly Logged[]): SnippetAsOf | undefined {
  let state = snippetDecider.initialState(id);
  let dates = { createdAt: EPOCH, updatedAt: EPOCH };
  for (const logged of history) {
    const event = logged as unknown as SnippetEvent;
    state = snippetDecider.evolve(state, event);
    if (event.type === 'SnippetCreated') dates = { createdAt: logged.occurredAt, updatedAt: logged.occurredAt };
    if (event.type === 'SnippetUpdated') dates = { ...dates, updatedAt: logged.occurredAt };
  }
  return state.snippet ? { id, snippet: state.snippet, ...dates } : undefined;
}
