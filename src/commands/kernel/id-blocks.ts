import { sql } from 'kysely';
import type { Db } from '../../database/database.js';

/**
 * New ids taken from their sequences a block at a time, as PostgreSQL's own sequence `CACHE`
 * does per session: one statement per BLOCK creations instead of one per creation (a round
 * trip costs about as much Node CPU as a small write's whole work). Like a sequence cache,
 * ids are unique and increase in the order a process asks for them; several processes
 * interleave theirs, and the ids a process had not used when it stops are a gap — GitLab's
 * ids promise neither order across writers nor the absence of gaps.
 */
const BLOCK = 20;

export class IdBlocks {
  private readonly free = new Map<string, number[]>();
  /** The block being taken, per sequence: who finds none left waits for it rather than taking another. */
  private readonly taking = new Map<string, Promise<void>>();

  async next(db: Db, sequence: string): Promise<number> {
    for (;;) {
      const free = this.free.get(sequence);
      if (free && free.length > 0) return free.shift()!;
      await (this.taking.get(sequence) ?? this.take(db, sequence));
    }
  }

  private take(db: Db, sequence: string): Promise<void> {
    const taking = sql<{ id: string }>`select nextval(${sequence}) as id from generate_series(1, ${BLOCK})`
      .execute(db)
      .then(({ rows }) => void this.free.set(sequence, rows.map((row) => Number(row.id)).sort((a, b) => a - b)))
      .finally(() => this.taking.delete(sequence));
    this.taking.set(sequence, taking);
    return taking;
  }
}
