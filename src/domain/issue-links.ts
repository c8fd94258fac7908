import { z } from 'zod';
import { type Claim, type ClaimChanges, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import { recordNotFound } from './errors.js';
import type { EventOf, EventSchemas, FeedIndex } from './events.js';
import { defineAggregate } from './aggregate.js';

/**
 * Links between issues (EE's `IssueLink`, licensed `related_issues`): one aggregate per link,
 * stream `issue-link-<id>`. A pair of issues is linked once whichever way round
 * (IssuableLinks::CreateService refuses a target among `related_issues`, which reads both
 * directions): a claim on the unordered pair keeps that under concurrency. A link goes with
 * either issue and with either project, in the projection (GitLab's foreign keys, `on delete
 * cascade`).
 */

// ───────────────────────────── Events ─────────────────────────────

const ofLink = { id: z.int(), source_id: z.int(), source_project_id: z.int(), target_id: z.int(), target_project_id: z.int() };

export const issueLinkEvents = {
  IssueLinkCreated: z.strictObject(ofLink),
  IssueLinkDeleted: z.strictObject(ofLink),
} satisfies EventSchemas;

export type IssueLinkEvent = EventOf<typeof issueLinkEvents>;

export const issueLinkStreamId = (id: number) => `issue-link-${id}`;

export const issueLinkEventIndex = (event: IssueLinkEvent): FeedIndex => ({ projectId: event.data.source_project_id, targetType: 'IssueLink', targetId: event.data.id });

// ───────────────────────────── State ─────────────────────────────

/** One end of a link: an issue and its project. */
export interface LinkedIssue {
  readonly issueId: number;
  readonly projectId: number;
}

export interface IssueLinkRecord {
  readonly source: LinkedIssue;
  readonly target: LinkedIssue;
}

export interface IssueLinkState {
  readonly id: number;
  /** null: never created, or deleted. */
  readonly link: IssueLinkRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

export type IssueLinkCommand = { readonly type: 'CreateIssueLink'; readonly source: LinkedIssue; readonly target: LinkedIssue } | { readonly type: 'DeleteIssueLink' };

const dataOf = (id: number, link: IssueLinkRecord) => ({
  id,
  source_id: link.source.issueId,
  source_project_id: link.source.projectId,
  target_id: link.target.issueId,
  target_project_id: link.target.projectId,
});

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: IssueLinkState, event: IssueLinkEvent): IssueLinkState {
  switch (event.type) {
    case 'IssueLinkCreated': {
      const { source_id, source_project_id, target_id, target_project_id } = event.data;
      return { ...state, link: { source: { issueId: source_id, projectId: source_project_id }, target: { issueId: target_id, projectId: target_project_id } } };
    }
    case 'IssueLinkDeleted':
      return { ...state, link: null };
    default:
      return unhandled(event);
  }
}

function decide(command: IssueLinkCommand, state: IssueLinkState): IssueLinkEvent[] {
  const { id, link } = state;
  switch (command.type) {
    case 'CreateIssueLink': {
      // A new id each time: a second create on the stream is a defect of the caller.
      if (link) throw new Error(`issue link ${id} exists`);
      // GitLab: IssueLink's check_self_relation fails the save, the service still answers
      // success, and the API's `IssueLink.find_by!` finds nothing: "404 Not found".
      if (command.source.issueId === command.target.issueId) throw recordNotFound();
      return [{ type: 'IssueLinkCreated', data: dataOf(id, command) }];
    }
    case 'DeleteIssueLink':
      if (!link) throw recordNotFound();
      return [{ type: 'IssueLinkDeleted', data: dataOf(id, link) }];
    default:
      return unhandled(command);
  }
}

export const issueLinkDecider: Decider<IssueLinkCommand, IssueLinkEvent, IssueLinkState, number> = {
  initialState: (id) => ({ id, link: null }),
  evolve,
  decide,
};

// ───────────────────────────── Claims ─────────────────────────────

/** The unordered pair: one link between two issues, whichever is the source. */
export const pairClaim = (a: number, b: number): Claim => ({ kind: 'issue_link_pair', key: `${Math.min(a, b)}/${Math.max(a, b)}`, conflictMessage: 'Issue(s) already assigned' });

export function issueLinkClaims(event: IssueLinkEvent): ClaimChanges {
  const claim = pairClaim(event.data.source_id, event.data.target_id);
  switch (event.type) {
    case 'IssueLinkCreated':
      return { acquire: [claim], release: [] };
    case 'IssueLinkDeleted':
      return { acquire: [], release: [claim] };
    default:
      return NO_CLAIMS;
  }
}

// ───────────────────────────── The aggregate ─────────────────────────────

/** One link between two issues (src/domain/issue-links.ts). */
export const issueLinks = defineAggregate({
  name: 'issue_links',
  streamId: issueLinkStreamId,
  events: issueLinkEvents,
  decider: issueLinkDecider,
  claims: issueLinkClaims,
  index: issueLinkEventIndex,
  idSequence: 'issue_links_id_seq',
});
