import type { Db } from '../database/database.js';
import type { ProjectedEvent } from '../eventstore/types.js';
import type { BatchGuard } from './stream-versions.js';

/**
 * A projector keeps read tables from events with idempotent statements (upserts guarded by
 * the stream version), so the same code runs inline, in the async worker and in rebuild.
 */
export interface Projector {
  readonly name: string;
  /** Bump to rebuild the projection from the log. */
  readonly version: number;
  /** Inline projections run in the append transaction (tables the REST API reads). */
  readonly mode: 'inline' | 'async';
  readonly handles: readonly string[];
  /** The read tables this projector owns (rebuilt and swapped together). */
  readonly tables: readonly string[];
  /**
   * Other projectors' tables `apply` reads. A rebuild replays a projector in one sequence
   * with the owners of those tables, after them; projectors that share nothing replay side
   * by side, each on its own connection.
   */
  readonly reads?: readonly string[];
  /**
   * When `apply` reads none of its statements' results (no select, no `returning`, no row
   * counts), the command handler sends them together with the append, in one round trip;
   * it finds that out by itself (src/commands/record-projections.ts).
   */
  apply(event: ProjectedEvent, trx: Db): Promise<void>;
  /**
   * Optional fast path for the async worker and rebuild: applies the handled events of a
   * batch (in log order) at once. Must leave the same rows as `apply` on each in turn
   * (test/properties/apply-batch.test.ts holds every projector that has one to it), and
   * keep its stream versions the way `guard` says (REPLAY_GUARD when not given).
   */
  applyBatch?(events: readonly ProjectedEvent[], trx: Db, guard?: BatchGuard): Promise<void>;
}
