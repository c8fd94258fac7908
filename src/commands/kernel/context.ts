import type { CompiledQuery } from 'kysely';
import type { Db, OneRoundTrip } from '../../database/database.js';
import type { ClaimChanges, ClaimRefusal, Decider, DomainEvent } from '../../domain/decider.js';
import type { EventSchemas } from '../../domain/events.js';
import type { Notifier } from '../../eventstore/notifier.js';
import type { EventIndex, EventMetadata, StoredEvent } from '../../eventstore/types.js';
import type { Projector } from '../../projections/projector.js';
import type { Precondition } from './precondition.js';
import type { FoldedStream, StreamStateCache } from './stream-cache.js';
import type { IdBlocks } from './id-blocks.js';

/** The command kernel's types: what a command runs in, what it is, what it gives back. */

/** What every command needs from the running process. */
export interface CommandContext {
  readonly db: Db;
  readonly inlineProjectors: readonly Projector[];
  readonly notifier: Notifier;
  readonly now: () => Date;
  /** Folded stream states between commands (optional: without it every command reads its whole stream). */
  readonly streamCache?: StreamStateCache;
  /** Sends a whole transaction at once (PostgreSQL): see one-round-trip.ts. */
  readonly oneRoundTrip?: OneRoundTrip;
  /** What the command's transaction checks first (a request's cached credentials). */
  readonly precondition?: Precondition;
  /** New ids a block at a time (id-blocks.ts); without it, one `nextval` per id. */
  readonly ids?: IdBlocks;
  /** Where the instance is reached (`FORGELOG_EXTERNAL_URL`), for the links reactors write (chat notifications). */
  readonly externalUrl?: () => string;
}

/**
 * What a write is made with: the command context, and the metadata every event it appends
 * carries — a request's actor, token and IP (src/http/kernel/auth.ts), a reactor's cause
 * (causation.ts), a CLI command's name.
 */
export interface Writer {
  readonly ctx: CommandContext;
  readonly metadata: EventMetadata;
}

/** One command on one stream, as an aggregate builds it (src/commands/kernel/run.ts). */
export interface CommandSpec<C, E extends DomainEvent, S> {
  readonly streamId: string;
  /** The stream's key, which a new stream's initial state is made from. */
  readonly key: unknown;
  readonly decider: Decider<C, E, S, any>;
  /** The aggregate's event schemas: every decided event is checked against them before it is appended. */
  readonly events: EventSchemas;
  readonly command: C | ((trx: Db) => Promise<C>);
  /**
   * For a command built in the transaction (a function): the same command built from rows read
   * before it, and a statement that locks those rows and divides by zero (SQLSTATE 22012)
   * unless they are still what it was built from. The one-round-trip path decides on it, the
   * statement first (one-round-trip.ts); when the statement fails, the ordinary path builds
   * the command in the transaction.
   */
  readonly optimistic?: { readonly command: C; readonly unchanged: CompiledQuery };
  readonly claims?: (event: E, before: S) => ClaimChanges;
  readonly claimRefusal?: ClaimRefusal;
  readonly index?: (event: E) => EventIndex;
  /**
   * The stream's key was just allocated (a new id from its sequence), so the stream is empty:
   * the first attempt decides on the initial state without reading it. Appending at version 0
   * fails if that was wrong, and the retry reads the stream.
   */
  readonly newStream?: boolean;
  /**
   * A stream this one was split from (AggregateDefinition.predecessor): its events are folded
   * before the stream's own, and never appended to.
   */
  readonly predecessor?: string;
}

/**
 * Commands whose streams the transaction's own work names (a push: which refs it moves is
 * known once its objects are read): built in the transaction, after the commands before
 * them, then decided and appended like them.
 */
export interface DeferredSpecs {
  readonly deferred: (trx: Db) => Promise<readonly CommandSpec<any, any, any>[]>;
}

export interface CommandResult<S> {
  readonly state: S;
  readonly version: number;
  readonly events: readonly StoredEvent[];
}

/** A command's result, and its stream's fold for the cache once the transaction commits. */
export interface Outcome<S> {
  readonly result: CommandResult<S>;
  readonly head: FoldedStream<S>;
}
