import type { Context } from 'hono';
import type { Writer } from '../../../commands/kernel/context.js';
import type { Db } from '../../../database/database.js';
import type { SubscriptionCommand } from '../../../domain/subscriptions.js';
import type { TimeTrackingCommand } from '../../../domain/time-tracking.js';
import type { ProjectScope } from '../../kernel/scope.js';

/**
 * What the endpoints issues and merge requests share (time tracking, subscriptions,
 * participants, todos) need of either: GitLab's `issuable_name`, `find_…_with_access` and the
 * entity. One implementation of each endpoint takes a kind (src/http/routes/issuables/).
 */

/** The columns the shared endpoints read of an issuable's row. */
export interface IssuableRow {
  readonly id: number;
  readonly author_id: number;
  readonly assignee_ids: number[];
  readonly time_estimate: number;
  readonly total_time_spent: number;
}

/** What a shared endpoint asks of the caller: to read it, to (un)subscribe, or to administer it (time tracking). */
export type IssuableAccess = 'read' | 'subscribe' | 'admin';

export interface IssuableKind<Row extends IssuableRow> {
  /** The path segment: `/projects/:id/<collection>/:<iidParam>`. */
  readonly collection: 'issues' | 'merge_requests';
  readonly iidParam: 'issue_iid' | 'merge_request_iid';
  readonly todoType: 'Issue' | 'MergeRequest';
  /** The issuable the path names, 404 when there is none (or it is hidden), 403 without the access. */
  find(c: Context, project: ProjectScope, access: IssuableAccess): Promise<Row>;
  findById(db: Db, id: number): Promise<Row | undefined>;
  run(w: Writer, id: number, command: TimeTrackingCommand | SubscriptionCommand): Promise<unknown>;
  /** The single view, with the caller's `subscribed` when known. */
  present(c: Context, project: ProjectScope, row: Row, subscribed?: boolean): Promise<unknown>;
}

export const issuablePath = (kind: IssuableKind<IssuableRow>, tail: string) => `/projects/:id/${kind.collection}/:${kind.iidParam}/${tail}`;
