import { notModified } from './errors.js';

/**
 * Explicit subscriptions to an issuable (GitLab's Subscribable over `subscriptions` rows),
 * the same for issues and merge requests: POST …/subscribe and …/unsubscribe.
 */

export type SubscriptionCommand = { readonly type: 'Subscribe' | 'Unsubscribe'; readonly userId: number };

export interface Subscribable {
  readonly authorId: number;
  readonly assigneeIds: readonly number[];
  /** Explicit subscriptions: user → subscribed. */
  readonly subscriptions: ReadonlyMap<number, boolean>;
}

/** Subscribable#subscribed?: an explicit choice, else participation (Participable: the author and assignees). */
export function isSubscribed(issuable: Subscribable, userId: number): boolean {
  const explicit = issuable.subscriptions.get(userId);
  if (explicit !== undefined) return explicit;
  return issuable.authorId === userId || issuable.assigneeIds.includes(userId);
}

/** The subscription a command records; API::Subscriptions answers 304 when it is already so. */
export function decideSubscription(command: SubscriptionCommand, issuable: Subscribable): boolean {
  const subscribe = command.type === 'Subscribe';
  if (isSubscribed(issuable, command.userId) === subscribe) throw notModified();
  return subscribe;
}

/** The subscriptions after a (un)subscribed event. */
export function withSubscription(subscriptions: ReadonlyMap<number, boolean>, userId: number, subscribed: boolean): ReadonlyMap<number, boolean> {
  const next = new Map(subscriptions);
  next.set(userId, subscribed);
  return next;
}
