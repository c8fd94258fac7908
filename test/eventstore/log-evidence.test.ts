import { createPublicKey, generateKeyPairSync, randomBytes, randomUUID, verify as verifySignature } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { feedIndexOf } from '../../src/commands/kernel/aggregates.js';
import type { Db } from '../../src/database/database.js';
import { eventHash } from '../../src/eventstore/hash.js';
import { leafOfEventHash, rootAt } from '../../src/eventstore/log-tree.js';
import { verifyConsistency, verifyInclusion } from '../../src/eventstore/merkle-tree.js';
import { leafFieldsOfRow, sealPending } from '../../src/eventstore/seal.js';
import type { EventsTable } from '../../src/eventstore/tables.js';
import { parsePublicKey, parseTreeHeadJson, publishTreeHead, signTreeHead, verifyTreeHead, type TreeHead } from '../../src/eventstore/tree-heads.js';
import { upcast } from '../../src/eventstore/upcasters.js';
import { verifyLog, type ProblemKind, type VerifyReport } from '../../src/eventstore/verify.js';
import { proveInclusion } from '../../src/eventstore/verify-tree.js';
import { repositoryObjectsCheck } from '../../src/projections/repository/verify.js';
import { addMember, createGroup, createProject, eventually, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { LOG_TABLES, backupLog, restoreLog, tamper, waitUntilReadable } from './audit-support.js';

/**
 * Issue 25 §1, the tamper suite: someone with full database rights edits the log, its seals,
 * its tree, its feed columns or its git objects. Every scenario is named; `events verify`
 * finds 27 of them by itself, and with a signed head kept outside the database (fetched from
 * GET /-/log/head before the tampering) all 34 — each named, the head's own findings apart.
 * The log is written through the API as clients write it, sealed in several ranges.
 */

const { privateKey: signingKey } = generateKeyPairSync('ed25519');
const publicKey = createPublicKey(signingKey);

let api: TestServer;
let db: Db;
let project: { id: number };
let group: { id: number };
let keptHead: TreeHead;
let objects: { project_id: number; sha: string; type: string }[];
let outsider: { token: string };
let tailStart: number;
let tailSealId: number;

type Row = Selectable<EventsTable>;

const rows = async (): Promise<Row[]> => db.selectFrom('events').selectAll().orderBy('transaction_id').orderBy('global_position').execute();
const seals = async () => db.selectFrom('event_seals').selectAll().orderBy('id').execute();
/**
 * The log's tail: the events written after the second range was sealed (the in-process
 * sealer may cut them into more than one seal; `tailSealId` is the first of those).
 */
async function tail(): Promise<Row[]> {
  return (await rows()).slice(tailStart);
}

/** The project's creation: sealed in the first range, followed by more events of its stream. */
async function middleEvent(): Promise<Row> {
  const all = await rows();
  return all.find((row) => row.event_type === 'ProjectCreated' && (row.data as { id?: number }).id === project.id)!;
}

/** The first sealed range of more than one event, before the tail. */
async function sealOfSeveral() {
  return (await seals()).find((seal) => seal.event_count > 1 && Number(seal.id) < tailSealId)!;
}

/** Recomputes a stream's hash chain from `fromVersion` on, as a tamperer who knows the hash function would. */
async function rehashStream(trx: Db, streamId: string, fromVersion: number) {
  const chain = await trx.selectFrom('events').selectAll().where('stream_id', '=', streamId).orderBy('stream_version').execute();
  let previous = '0'.repeat(64);
  for (const row of chain) {
    if (row.stream_version >= fromVersion) {
      const hash = eventHash(previous, leafFieldsOfRow(row));
      await sql`update events set hash = ${hash} where global_position = ${row.global_position}`.execute(trx);
      previous = hash;
    } else previous = row.hash;
  }
}

/**
 * Appends a plausible event as the database's owner could: a copy of `template`'s type and
 * metadata with other data, at the head of `streamId`, correctly hashed onto its chain, its
 * feed columns what the aggregate's index gives; `transactionId` places it in gap-free order
 * (default: the inserting transaction's, the newest).
 */
async function forge(trx: Db, template: Row, options: { streamId?: string; data: unknown; transactionId?: string }): Promise<void> {
  const streamId = options.streamId ?? template.stream_id;
  const head = await trx.selectFrom('events').selectAll().where('stream_id', '=', streamId).orderBy('stream_version', 'desc').limit(1).executeTakeFirst();
  const event = {
    streamId,
    streamVersion: (head?.stream_version ?? 0) + 1,
    eventId: randomUUID(),
    type: template.event_type,
    schemaVersion: template.schema_version,
    data: options.data,
    metadata: template.metadata,
    occurredAt: template.occurred_at,
  };
  const hash = eventHash(head?.hash ?? '0'.repeat(64), event);
  const columns = feedIndexOf(event.type, upcast(event.type, event.schemaVersion, event.data).data, event.metadata)!;
  await sql`
    insert into events (transaction_id, stream_id, stream_version, event_id, event_type, schema_version, data, metadata,
                        actor_id, project_id, group_id, target_type, target_id, occurred_at, hash)
    values (${options.transactionId === undefined ? sql`pg_current_xact_id()` : sql`${options.transactionId}::xid8`}, ${streamId}, ${event.streamVersion},
            ${event.eventId}, ${event.type}, ${event.schemaVersion}, ${JSON.stringify(event.data)}::jsonb, ${JSON.stringify(event.metadata)}::jsonb,
            ${columns.actor_id}, ${columns.project_id}, ${columns.group_id}, ${columns.target_type}, ${columns.target_id},
            ${event.occurredAt.toISOString()}::timestamptz, ${hash})`.execute(trx);
}

/**
 * What a thorough tamperer does to hide a change to the tail: removes the seals from `sealId`
 * on, the tree's leaves and nodes past the events they covered, and every signed head past
 * them (heads cannot be signed again without the key, which is not in the database).
 */
async function unseal(trx: Db, sealId: number) {
  const { rows: kept } = await sql<{ n: string }>`select coalesce(sum(event_count), 0)::text as n from event_seals where id < ${sealId}`.execute(trx);
  const size = Number(kept[0]!.n);
  await sql`delete from event_seals where id >= ${sealId}`.execute(trx);
  await sql`delete from log_tree_leaves where leaf_index >= ${size}`.execute(trx);
  await sql`delete from log_tree_nodes where (node_index + 1) * (1::bigint << level) > ${size}`.execute(trx);
  await sql`delete from log_tree_heads where tree_size > ${size}`.execute(trx);
}


/** Seals again what the tamperer left unsealed, without a key: no head is signed. */
const reseal = async () => {
  await waitUntilReadable(db);
  await sealPending(db);
};

async function tamperObjects(...changes: string[]) {
  await db.transaction().execute(async (trx) => {
    await sql`alter table repository_objects disable trigger repository_objects_no_update`.execute(trx);
    for (const change of changes) await sql.raw(change).execute(trx);
    await sql`alter table repository_objects enable trigger repository_objects_no_update`.execute(trx);
  });
}

interface Scenario {
  name: string;
  tamper: () => Promise<void>;
  /** What `events verify` names by itself; `[]`: it cannot tell. */
  alone: ProblemKind[];
  /** What the kept head adds (problems about the kept head itself). */
  kept: ProblemKind[];
}

const SCENARIOS: Scenario[] = [
  // Edits of sealed events
  {
    name: 'edit-data: an event\'s data edited, its stored hash left',
    tamper: async () => {
      const e = await middleEvent();
      await tamper(db, (trx) => sql`update events set data = data || '{"forged":true}' where global_position = ${e.global_position}`.execute(trx));
    },
    alone: ['hash_mismatch', 'seal_mismatch'],
    kept: [],
  },
  {
    name: 'edit-metadata: an event\'s acting user and IP edited',
    tamper: async () => {
      const e = await middleEvent();
      await tamper(db, (trx) => sql`update events set metadata = metadata || '{"ip":"10.6.6.6"}' where global_position = ${e.global_position}`.execute(trx));
    },
    alone: ['hash_mismatch', 'seal_mismatch'],
    kept: [],
  },
  {
    name: 'edit-occurred-at: an event moved in time',
    tamper: async () => {
      const e = await middleEvent();
      await tamper(db, (trx) => sql`update events set occurred_at = occurred_at - interval '1 year' where global_position = ${e.global_position}`.execute(trx));
    },
    alone: ['hash_mismatch', 'seal_mismatch'],
    kept: [],
  },
  {
    name: 'edit-event-id: an event given another id',
    tamper: async () => {
      const e = await middleEvent();
      await tamper(db, (trx) => sql`update events set event_id = ${randomUUID()} where global_position = ${e.global_position}`.execute(trx));
    },
    alone: ['hash_mismatch', 'seal_mismatch'],
    kept: [],
  },
  {
    name: 'edit-stored-hash: an event\'s stored hash replaced',
    tamper: async () => {
      const e = await middleEvent();
      await tamper(db, (trx) => sql`update events set hash = ${randomBytes(32).toString('hex')} where global_position = ${e.global_position}`.execute(trx));
    },
    alone: ['hash_mismatch', 'seal_mismatch', 'tree_mismatch', 'head_mismatch'],
    kept: ['head_mismatch'],
  },
  {
    name: 'edit-rehashed: an event edited and its own hash recomputed',
    tamper: async () => {
      const e = await middleEvent();
      await tamper(db, async (trx) => {
        await sql`update events set data = data || '{"forged":true}' where global_position = ${e.global_position}`.execute(trx);
        const row = await trx.selectFrom('events').selectAll().where('global_position', '=', e.global_position).executeTakeFirstOrThrow();
        const previous = await trx.selectFrom('events').select('hash').where('stream_id', '=', e.stream_id).where('stream_version', '=', e.stream_version - 1).executeTakeFirst();
        await sql`update events set hash = ${eventHash(previous?.hash ?? '0'.repeat(64), leafFieldsOfRow(row))} where global_position = ${e.global_position}`.execute(trx);
      });
    },
    alone: ['hash_mismatch', 'seal_mismatch', 'tree_mismatch', 'head_mismatch'],
    kept: ['head_mismatch'],
  },
  {
    name: 'edit-rechained: an event edited and its whole stream rehashed (a valid chain)',
    tamper: async () => {
      const e = await middleEvent();
      await tamper(db, async (trx) => {
        await sql`update events set data = data || '{"forged":true}' where global_position = ${e.global_position}`.execute(trx);
        await rehashStream(trx, e.stream_id, e.stream_version);
      });
    },
    alone: ['seal_mismatch', 'tree_mismatch', 'head_mismatch'],
    kept: ['head_mismatch'],
  },
  // Deletions
  {
    name: 'delete-middle: an event inside its stream deleted',
    tamper: async () => {
      const e = await middleEvent();
      await tamper(db, (trx) => sql`delete from events where global_position = ${e.global_position}`.execute(trx));
    },
    alone: ['version_gap', 'seal_mismatch', 'tree_mismatch', 'head_mismatch', 'head_truncated'],
    kept: ['head_truncated'],
  },
  {
    name: 'delete-stream-head: the last event of a stream deleted, inside the sealed log',
    tamper: async () => {
      const all = (await rows()).slice(0, tailStart);
      const e = all.find((row) => row.event_type === 'EnvironmentCreated')!;
      expect(all.some((o) => o.stream_id === e.stream_id && o.stream_version > e.stream_version)).toBe(false);
      await tamper(db, (trx) => sql`delete from events where global_position = ${e.global_position}`.execute(trx));
    },
    alone: ['seal_mismatch', 'tree_mismatch', 'head_mismatch', 'head_truncated'],
    kept: ['head_truncated'],
  },
  {
    name: 'delete-stream: a whole stream deleted',
    tamper: async () => {
      const stream = (await rows()).find((r) => r.event_type === 'BroadcastMessageCreated')!.stream_id;
      await tamper(db, (trx) => sql`delete from events where stream_id = ${stream}`.execute(trx));
    },
    alone: ['seal_mismatch', 'tree_mismatch', 'head_mismatch', 'head_truncated'],
    kept: ['head_truncated'],
  },
  // Insertions
  {
    name: 'insert-between-seals: a correctly hashed event placed between two seals',
    tamper: async () => {
      const [first] = await seals();
      const template = (await rows()).find((r) => r.event_type === 'BroadcastMessageCreated')!;
      await tamper(db, (trx) => forge(trx, template, { streamId: `${template.stream_id}9`, data: { ...(template.data as object), message: 'forged' }, transactionId: first!.last_transaction_id }));
    },
    alone: ['unsealed_event', 'tree_mismatch', 'head_mismatch'],
    kept: ['head_mismatch'],
  },
  {
    name: 'insert-inside-seal: a correctly hashed event placed inside a sealed range',
    tamper: async () => {
      const second = await sealOfSeveral();
      const template = (await rows()).find((r) => r.event_type === 'BroadcastMessageCreated')!;
      await tamper(db, (trx) => forge(trx, template, { streamId: `${template.stream_id}9`, data: { ...(template.data as object), message: 'forged' }, transactionId: second.first_transaction_id }));
    },
    alone: ['seal_mismatch', 'tree_mismatch', 'head_mismatch'],
    kept: ['head_mismatch'],
  },
  // Reordering
  {
    name: 'reorder-stream: two versions of a stream swapped',
    tamper: async () => {
      const e = await middleEvent();
      await tamper(db, async (trx) => {
        await sql`update events set stream_version = -1 where stream_id = ${e.stream_id} and stream_version = ${e.stream_version}`.execute(trx);
        await sql`update events set stream_version = ${e.stream_version} where stream_id = ${e.stream_id} and stream_version = ${e.stream_version + 1}`.execute(trx);
        await sql`update events set stream_version = ${e.stream_version + 1} where stream_id = ${e.stream_id} and stream_version = -1`.execute(trx);
      });
    },
    alone: ['hash_mismatch', 'seal_mismatch'],
    kept: [],
  },
  {
    name: 'reorder-log: two events of different streams swapped in the log\'s order',
    tamper: async () => {
      const all = await rows();
      const a = all[1]!;
      const b = (await tail()).find((r) => r.stream_id !== a.stream_id)!;
      await tamper(db, (trx) => sql`update events e set transaction_id = o.transaction_id from events o where (e.global_position, o.global_position) in ((${a.global_position}::bigint, ${b.global_position}::bigint), (${b.global_position}::bigint, ${a.global_position}::bigint))`.execute(trx));
    },
    alone: ['unsealed_event', 'seal_mismatch', 'tree_mismatch', 'head_mismatch'],
    kept: ['head_mismatch'],
  },
  // Seals
  {
    name: 'seal-deleted-middle: a seal between two others deleted',
    tamper: async () => tamper(db, (trx) => sql`delete from event_seals where id = ${2}`.execute(trx)),
    alone: ['seal_chain_broken', 'unsealed_event'],
    kept: [],
  },
  {
    name: 'seal-deleted-first: the first seal deleted',
    tamper: async () => tamper(db, (trx) => sql`delete from event_seals where id = ${1}`.execute(trx)),
    alone: ['seal_chain_broken', 'unsealed_event'],
    kept: [],
  },
  {
    name: 'seal-altered: a seal\'s event count edited',
    tamper: async () => tamper(db, (trx) => sql`update event_seals set event_count = event_count + 1 where id = ${2}`.execute(trx)),
    alone: ['seal_hash_mismatch', 'seal_mismatch'],
    kept: [],
  },
  {
    name: 'seal-forged: a seal\'s Merkle root replaced and its seal hash recomputed',
    tamper: async () => {
      const { sealHash } = await import('../../src/eventstore/seal.js');
      const seal = (await seals())[1]!;
      const forged = { ...seal, merkle_root: randomBytes(32).toString('hex') };
      await tamper(db, (trx) => sql`update event_seals set merkle_root = ${forged.merkle_root}, seal_hash = ${sealHash(forged)} where id = ${seal.id}`.execute(trx));
    },
    alone: ['seal_mismatch', 'seal_chain_broken'],
    kept: [],
  },
  {
    name: 'head-forged: a signed head inserted with another key\'s signature',
    tamper: async () => {
      const other = generateKeyPairSync('ed25519').privateKey;
      const size = keptHead.treeSize + 1000;
      const forged = signTreeHead(other, size, Date.now(), randomBytes(32));
      await tamper(db, (trx) =>
        trx.insertInto('log_tree_heads').values({ tree_size: String(size), timestamp_ms: String(forged.timestamp), root_hash: forged.rootHash, signature: forged.signature }).execute(),
      );
    },
    alone: ['head_signature_invalid', 'head_truncated'],
    kept: [],
  },
  {
    name: 'head-empty-forged: a head of the empty tree inserted with another key\'s signature and a root that is not the empty tree\'s',
    tamper: async () => {
      const forged = signTreeHead(generateKeyPairSync('ed25519').privateKey, 0, Date.now(), randomBytes(32));
      await tamper(db, (trx) => trx.insertInto('log_tree_heads').values({ tree_size: '0', timestamp_ms: String(forged.timestamp), root_hash: forged.rootHash, signature: forged.signature }).execute());
    },
    alone: ['head_signature_invalid', 'head_mismatch'],
    kept: [],
  },
  {
    name: 'head-rewritten: a tail event rewritten and resealed, and the published heads over it given the new roots (their signatures kept)',
    tamper: async () => {
      const e = (await tail()).find((r) => r.event_type === 'GroupUpdated')!;
      const heads = await db.selectFrom('log_tree_heads').selectAll().where('tree_size', '>', String(tailStart)).execute();
      expect(heads.length).toBeGreaterThan(0);
      await tamper(db, async (trx) => {
        await sql`update events set data = jsonb_set(data, '{changes,description}', '"rewritten"') where global_position = ${e.global_position}`.execute(trx);
        await rehashStream(trx, e.stream_id, e.stream_version);
        await unseal(trx, tailSealId);
      });
      await reseal();
      await tamper(db, async (trx) => {
        for (const head of heads) {
          const root = await rootAt(trx, Number(head.tree_size));
          expect(root.equals(head.root_hash)).toBe(false);
          await trx.insertInto('log_tree_heads').values({ tree_size: head.tree_size, timestamp_ms: head.timestamp_ms, root_hash: root, signature: head.signature }).execute();
        }
      });
    },
    alone: ['head_signature_invalid'],
    kept: ['head_mismatch', 'consistency_failed'],
  },
  // Outside the digests: the feed columns and the git objects
  {
    name: 'feed-actor: an event\'s actor_id column edited',
    tamper: async () => {
      const e = (await rows()).find((r) => r.actor_id !== null)!;
      await tamper(db, (trx) => sql`update events set actor_id = actor_id + 1000 where global_position = ${e.global_position}`.execute(trx));
    },
    alone: ['index_mismatch'],
    kept: [],
  },
  {
    name: 'feed-project: an event\'s project_id column edited',
    tamper: async () => {
      const e = (await rows()).find((r) => r.project_id !== null)!;
      await tamper(db, (trx) => sql`update events set project_id = project_id + 1000 where global_position = ${e.global_position}`.execute(trx));
    },
    alone: ['index_mismatch'],
    kept: [],
  },
  {
    name: 'object-edited: a git blob\'s content edited',
    tamper: async () => {
      const blob = objects.find((o) => o.type === 'blob')!;
      await tamperObjects(`update repository_objects set content = convert_to('edited\n', 'UTF8') where project_id = ${blob.project_id} and sha = '${blob.sha}'`);
    },
    alone: ['object_mismatch'],
    kept: [],
  },
  {
    name: 'object-deleted: a git tree deleted',
    tamper: async () => {
      const tree = objects.find((o) => o.type === 'tree')!;
      await tamperObjects(`delete from repository_objects where project_id = ${tree.project_id} and sha = '${tree.sha}'`);
    },
    alone: ['object_missing'],
    kept: [],
  },
  // Truncation
  {
    name: 'truncate-events: the tail\'s events deleted, their seals left',
    tamper: async () => {
      const gone = await tail();
      await tamper(db, (trx) => sql`delete from events where global_position in (${sql.join(gone.map((r) => r.global_position))})`.execute(trx));
    },
    alone: ['seal_mismatch', 'tree_mismatch', 'head_truncated'],
    kept: ['head_truncated'],
  },
  {
    name: 'stream-rechained: a stream deleted and written anew with a valid chain, inside the sealed log',
    tamper: async () => {
      const first = (await seals())[0]!;
      const all = await rows();
      const template = all.find((r) => r.event_type === 'BroadcastMessageCreated')!;
      await tamper(db, async (trx) => {
        await sql`delete from events where stream_id = ${template.stream_id}`.execute(trx);
        await forge(trx, template, { data: { ...(template.data as object), message: 'rewritten' }, transactionId: first.first_transaction_id });
      });
    },
    alone: ['seal_mismatch', 'tree_mismatch', 'head_mismatch'],
    kept: ['head_mismatch'],
  },
  // What needs something kept outside the database: the tamperer also hides the change from
  // the seals, the tree and the published heads.
  {
    name: 'truncate-with-seals: the tail deleted with its seals, their leaves and their heads',
    tamper: async () => {
      const gone = await tail();
      const id = tailSealId;
      await tamper(db, async (trx) => {
        await sql`delete from events where global_position in (${sql.join(gone.map((r) => r.global_position))})`.execute(trx);
        await unseal(trx, id);
      });
    },
    alone: [],
    kept: ['head_truncated', 'consistency_failed'],
  },
  {
    name: 'tail-rewritten-resealed: a tail event edited, its stream rehashed, the tail sealed again',
    tamper: async () => {
      const e = (await tail()).find((r) => r.event_type === 'GroupUpdated')!;
      const id = tailSealId;
      await tamper(db, async (trx) => {
        await sql`update events set data = jsonb_set(data, '{changes,description}', '"rewritten"') where global_position = ${e.global_position}`.execute(trx);
        await rehashStream(trx, e.stream_id, e.stream_version);
        await unseal(trx, id);
      });
      await reseal();
    },
    alone: [],
    kept: ['head_mismatch', 'consistency_failed'],
  },
  {
    name: 'tail-replaced-resealed: the tail deleted, forged events with valid chains appended, sealed again',
    tamper: async () => {
      const gone = await tail();
      const template = gone.find((r) => r.event_type === 'GroupUpdated')!;
      const id = tailSealId;
      await tamper(db, async (trx) => {
        await sql`delete from events where global_position in (${sql.join(gone.map((r) => r.global_position))})`.execute(trx);
        await unseal(trx, id);
        for (let i = 0; i < gone.length; i++) await forge(trx, template, { data: template.data });
      });
      await reseal();
    },
    alone: [],
    kept: ['head_mismatch', 'consistency_failed'],
  },
  {
    name: 'tail-reordered-resealed: two tail events of different streams swapped, sealed again',
    tamper: async () => {
      const events = await tail();
      const heads = events.filter((r) => !events.some((o) => o.stream_id === r.stream_id && o.stream_version > r.stream_version));
      const [a, b] = [heads[0]!, heads.find((r) => r.stream_id !== heads[0]!.stream_id && r.transaction_id !== heads[0]!.transaction_id)!];
      const id = tailSealId;
      await tamper(db, async (trx) => {
        await sql`update events e set transaction_id = o.transaction_id from events o where (e.global_position, o.global_position) in ((${a.global_position}::bigint, ${b.global_position}::bigint), (${b.global_position}::bigint, ${a.global_position}::bigint))`.execute(trx);
        await unseal(trx, id);
      });
      await reseal();
    },
    alone: [],
    kept: ['head_mismatch', 'consistency_failed'],
  },
  {
    name: 'seals-deleted-tail: the tail\'s seals deleted with their leaves and heads (its events left unsealed)',
    tamper: async () => {
      const id = tailSealId;
      await tamper(db, (trx) => unseal(trx, id));
    },
    alone: [],
    kept: ['consistency_failed'],
  },
  {
    name: 'seals-deleted-all: every seal, leaf and head deleted',
    tamper: async () => tamper(db, (trx) => unseal(trx, 1)),
    alone: [],
    kept: ['consistency_failed'],
  },
  {
    name: 'forged-after-last-seal: the tail\'s seals removed and a correctly hashed event forged after what is left sealed',
    tamper: async () => {
      const [first] = await tail();
      const template = (await rows()).find((r) => r.event_type === 'BroadcastMessageCreated')!;
      await tamper(db, async (trx) => {
        await unseal(trx, tailSealId);
        await forge(trx, template, { streamId: `${template.stream_id}9`, data: { ...(template.data as object), message: 'forged' }, transactionId: first!.transaction_id });
      });
    },
    alone: [],
    kept: ['head_mismatch', 'consistency_failed'],
  },
];

const verify = (head?: TreeHead): Promise<VerifyReport> =>
  verifyLog(db, { feedIndex: feedIndexOf, objects: repositoryObjectsCheck(db), publicKey, ...(head && { keptHead: head }) });

const kinds = (report: VerifyReport) => [...new Set(report.problems.map((p) => p.kind))].sort();
const keptKinds = (report: VerifyReport) => [...new Set(report.problems.filter((p) => p.treeSize === keptHead.treeSize && /kept head|consistency proof/.test(p.detail)).map((p) => p.kind))].sort();

beforeAll(async () => {
  // A head interval of a day: the in-process sealer signs the first head, the test the others.
  api = await startTestServer({ logHeads: { signingKey, intervalMs: 86_400_000 } });
  db = api.handle.db;
  await settled(api);
  const alice = await api.createUser();
  const bob = await api.createUser();
  outsider = await api.createUser();
  group = await createGroup(api, { token: alice.token });
  project = await createProject(api, { token: alice.token, group });
  await addMember(api, 'groups', group.id, bob.user.id, 30);
  expect((await api.post(`/projects/${project.id}/environments`, { name: 'production' }, { token: alice.token })).status).toBe(201);
  expect((await api.post('/broadcast_messages', { message: 'maintenance tonight' })).status).toBe(201);
  const commit = (branch: string, actions: object[], extra: object = {}) => api.post(`/projects/${project.id}/repository/commits`, { branch, commit_message: 'change', actions, ...extra });
  expect((await commit('master', [{ action: 'create', file_path: 'README.md', content: 'read me\n' }, { action: 'create', file_path: 'docs/guide.md', content: 'a guide\n' }])).status).toBe(201);
  // The server's own sealer signs the first head by itself (FORGELOG_LOG_SIGNING_KEY set, no head yet).
  await eventually(async () => (await db.selectFrom('log_tree_heads').select('tree_size').executeTakeFirst()) ?? undefined, 20_000);
  await sealAndSign();
  // Two more ranges: the second in the middle, the third the tail.
  expect((await api.put(`/projects/${project.id}`, { description: 'second range' }, { token: alice.token })).status).toBe(200);
  expect((await commit('feature', [{ action: 'update', file_path: 'docs/guide.md', content: 'a better guide\n' }], { start_branch: 'master' })).status).toBe(201);
  await sealAndSign();
  tailStart = Number((await sql<{ n: string }>`select count(*) as n from log_tree_leaves`.execute(db)).rows[0]!.n);
  tailSealId = Number((await seals()).at(-1)!.id) + 1;
  expect((await api.put(`/groups/${group.id}`, { description: 'the tail' }, { token: alice.token })).status).toBe(200);
  expect((await api.post(`/projects/${project.id}/archive`, undefined, { token: alice.token })).status).toBe(201);
  await addMember(api, 'projects', project.id, bob.user.id, 40);
  await sealAndSign();
  // The auditor's copy, fetched as a client would, before anyone tampers.
  const head = await fetchLog('/-/log/head');
  expect(head.status).toBe(200);
  keptHead = parseTreeHeadJson(head.text);
  objects = (await sql<{ project_id: number; sha: string; type: string }>`select project_id, sha, type from repository_objects order by sha`.execute(db)).rows;
  await backupLog(db);
  await sql`create table repository_objects_backup as select * from repository_objects`.execute(db);
}, 120_000);

afterAll(async () => {
  if (!api) return;
  for (const table of ['events', ...LOG_TABLES, 'repository_objects']) await sql.raw(`drop table if exists ${table}_backup`).execute(db);
  await api.close();
});

/** Seals what the writes so far left (after the in-process sealer's own round: it wakes a second after an append) and signs a head. */
async function sealAndSign() {
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await waitUntilReadable(db);
  await sealPending(db);
  await publishTreeHead(db, signingKey);
}

function fetchLog(path: string, token: string | null = api.rootToken) {
  return fetch(`${api.apiUrl}${path}`, { headers: token ? { 'PRIVATE-TOKEN': token } : {} }).then(async (response) => {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: response.status, headers: response.headers, text, body: body as any };
  });
}

describe('the tamper suite (issue 25 §1): named, with and without a kept head', () => {
  afterEach(async () => {
    await restoreLog(db);
    await tamperObjects('delete from repository_objects', 'insert into repository_objects select * from repository_objects_backup');
  });

  it('builds a log of three seals and several signed heads, and finds it clean with and without the kept head', async () => {
    expect((await seals()).length).toBeGreaterThanOrEqual(3);
    const heads = await db.selectFrom('log_tree_heads').selectAll().execute();
    expect(heads.length).toBeGreaterThanOrEqual(3);
    for (const report of [await verify(), await verify(keptHead)]) {
      expect(report.problems).toEqual([]);
      expect(report).toMatchObject({ ok: true, treeSize: keptHead.treeSize, headsChecked: heads.length, signaturesChecked: true });
    }
    // Without the public key the report says the signatures went unchecked.
    expect(await verifyLog(db, { feedIndex: feedIndexOf })).toMatchObject({ ok: true, headsChecked: heads.length, signaturesChecked: false });
    expect(verifyTreeHead(publicKey, keptHead)).toBe(true);
    expect(await rootAt(db, keptHead.treeSize)).toEqual(keptHead.rootHash);
  });

  it('has 34 scenarios: 27 found by verify alone, 7 that need the kept head', () => {
    expect(SCENARIOS).toHaveLength(34);
    expect(new Set(SCENARIOS.map((s) => s.name.split(':')[0])).size).toBe(34);
    expect(SCENARIOS.filter((s) => s.alone.length > 0)).toHaveLength(27);
  });

  for (const scenario of SCENARIOS) {
    it(scenario.name, async () => {
      await scenario.tamper();
      const alone = await verify();
      if (scenario.alone.length === 0) expect(alone.problems).toEqual([]);
      else expect(kinds(alone)).toEqual([...scenario.alone].sort());
      const withHead = await verify(keptHead);
      expect(withHead.ok).toBe(false);
      expect(kinds(withHead)).toEqual([...new Set([...scenario.alone, ...scenario.kept])].sort());
      expect(keptKinds(withHead)).toEqual([...scenario.kept].sort());
    });
  }
});

describe('events prove: one event\'s inclusion under the kept head', () => {
  afterEach(() => restoreLog(db));

  it('proves an event of the kept head\'s tree, with its audit path', async () => {
    const e = await middleEvent();
    const report = await proveInclusion(db, e.global_position, keptHead, publicKey);
    expect(report).toMatchObject({ ok: true, position: e.global_position, tree_size: keptHead.treeSize, problems: [] });
    expect(verifyInclusion(leafOfEventHash(e.hash), report.leaf_index!, keptHead.treeSize, report.audit_path.map((h) => Buffer.from(h, 'base64')), keptHead.rootHash)).toBe(true);
  });

  it('names an edited event, a forged head and a rewritten log', async () => {
    const e = await middleEvent();
    await tamper(db, (trx) => sql`update events set data = data || '{"forged":true}' where global_position = ${e.global_position}`.execute(trx));
    expect((await proveInclusion(db, e.global_position, keptHead, publicKey)).problems.map((p) => p.kind)).toEqual(['hash_mismatch']);
    const forgedHead = { ...keptHead, timestamp: keptHead.timestamp + 1 };
    expect((await proveInclusion(db, e.global_position, forgedHead, publicKey)).problems.map((p) => p.kind)).toEqual(['head_signature_invalid', 'hash_mismatch']);
    await restoreLog(db);
    const id = tailSealId;
    const victim = (await tail()).find((r) => r.event_type === 'GroupUpdated')!;
    await tamper(db, async (trx) => {
      await sql`update events set data = jsonb_set(data, '{changes,description}', '"rewritten"') where global_position = ${victim.global_position}`.execute(trx);
      await rehashStream(trx, victim.stream_id, victim.stream_version);
      await unseal(trx, id);
    });
    await reseal();
    expect((await proveInclusion(db, victim.global_position, keptHead, publicKey)).problems.map((p) => p.kind)).toEqual(['inclusion_failed']);
  });
});

describe('GET /-/log/* (forgelog extensions, RFC 6962 §4 shapes)', () => {
  it('answers 401 without a token and 403 to a user who is not an administrator', async () => {
    for (const path of ['/-/log/head', '/-/log/public_key', '/-/log/proof/consistency?first=1&second=2', `/-/log/proof/inclusion?position=1&tree_size=2`]) {
      expect(await fetchLog(path, null)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
      expect(await fetchLog(path, outsider.token)).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    }
  });

  it('GET /-/log/head: the newest signed head, or the one of ?tree_size', async () => {
    const newest = await fetchLog('/-/log/head');
    expect(newest.status).toBe(200);
    expect(Object.keys(newest.body)).toEqual(['tree_size', 'timestamp', 'sha256_root_hash', 'tree_head_signature']);
    expect(newest.body.tree_size).toBe(keptHead.treeSize);
    const first = await db.selectFrom('log_tree_heads').select('tree_size').orderBy('tree_size').limit(1).executeTakeFirstOrThrow();
    const earlier = await fetchLog(`/-/log/head?tree_size=${first.tree_size}`);
    expect(earlier.status).toBe(200);
    const head = parseTreeHeadJson(earlier.text);
    expect(head.treeSize).toBe(Number(first.tree_size));
    expect(verifyTreeHead(publicKey, head)).toBe(true);
    expect(await fetchLog(`/-/log/head?tree_size=${keptHead.treeSize + 7}`)).toMatchObject({ status: 404, body: { message: '404 Tree head Not Found' } });
    expect(await fetchLog('/-/log/head?tree_size=many')).toMatchObject({ status: 400, body: { error: 'tree_size is invalid' } });
  });

  it('GET /-/log/public_key: the key as SubjectPublicKeyInfo PEM', async () => {
    const response = await fetchLog('/-/log/public_key');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/x-pem-file/);
    expect(response.text).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(parsePublicKey(response.text).export({ format: 'der', type: 'spki' })).toEqual(publicKey.export({ format: 'der', type: 'spki' }));
    // An outsider with only this PEM checks a head by RFC 6962 §3.5 alone: v1, tree_hash, timestamp, tree size, root.
    const u64 = (n: number) => Buffer.from(BigInt(n).toString(16).padStart(16, '0'), 'hex');
    const signed = Buffer.concat([Buffer.from([0, 1]), u64(keptHead.timestamp), u64(keptHead.treeSize), keptHead.rootHash]);
    expect(keptHead.signature.subarray(0, 4).toString('hex')).toBe('08070040');
    expect(verifySignature(null, signed, createPublicKey(response.text), keptHead.signature.subarray(4))).toBe(true);
  });

  it('GET /-/log/proof/consistency: a proof that verifies between two published heads', async () => {
    const first = parseTreeHeadJson((await fetchLog(`/-/log/head?tree_size=${(await db.selectFrom('log_tree_heads').select('tree_size').orderBy('tree_size').limit(1).executeTakeFirstOrThrow()).tree_size}`)).text);
    const response = await fetchLog(`/-/log/proof/consistency?first=${first.treeSize}&second=${keptHead.treeSize}`);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['consistency']);
    const proof = (response.body.consistency as string[]).map((h) => Buffer.from(h, 'base64'));
    expect(proof.length).toBeGreaterThan(0);
    expect(verifyConsistency(first.treeSize, keptHead.treeSize, proof, first.rootHash, keptHead.rootHash)).toBe(true);
    expect((await fetchLog(`/-/log/proof/consistency?first=${keptHead.treeSize}&second=${keptHead.treeSize}`)).body).toEqual({ consistency: [] });
    expect(await fetchLog(`/-/log/proof/consistency?first=3&second=2`)).toMatchObject({ status: 400, body: { message: '400 Bad request - first is larger than second' } });
    expect(await fetchLog(`/-/log/proof/consistency?first=1&second=${keptHead.treeSize + 1}`)).toMatchObject({
      status: 400,
      body: { message: `400 Bad request - second is larger than the log tree (${keptHead.treeSize} leaves)` },
    });
    expect(await fetchLog('/-/log/proof/consistency')).toMatchObject({ status: 400, body: { error: 'first is missing, second is missing' } });
  });

  it('GET /-/log/proof/inclusion: the audit path of the event at a log position', async () => {
    const e = await middleEvent();
    const response = await fetchLog(`/-/log/proof/inclusion?position=${e.global_position}&tree_size=${keptHead.treeSize}`);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['leaf_index', 'audit_path']);
    const path = (response.body.audit_path as string[]).map((h) => Buffer.from(h, 'base64'));
    expect(verifyInclusion(leafOfEventHash(e.hash), response.body.leaf_index, keptHead.treeSize, path, keptHead.rootHash)).toBe(true);
    expect(await fetchLog(`/-/log/proof/inclusion?position=999999&tree_size=${keptHead.treeSize}`)).toMatchObject({ status: 404, body: { message: '404 Leaf Not Found' } });
    expect(await fetchLog(`/-/log/proof/inclusion?position=${e.global_position}&tree_size=${keptHead.treeSize + 1}`)).toMatchObject({ status: 400 });
    expect(await fetchLog('/-/log/proof/inclusion?position=1')).toMatchObject({ status: 400, body: { error: 'tree_size is missing' } });
  });

  it('refuses what is not a tree size or a position with 400 in Grape\'s shape, before any proof is read', async () => {
    const n = keptHead.treeSize;
    const invalid = (name: string) => ({ status: 400, body: { error: `${name} is invalid` } });
    for (const bad of ['abc', '1.5', '-1', '1e3', '0x10', '', '%20', '9007199254740992', '99999999999999999999999']) {
      expect(await fetchLog(`/-/log/proof/consistency?first=${bad}&second=${n}`), bad).toMatchObject(invalid('first'));
      expect(await fetchLog(`/-/log/proof/consistency?first=1&second=${bad}`), bad).toMatchObject(invalid('second'));
      expect(await fetchLog(`/-/log/proof/inclusion?position=${bad}&tree_size=${n}`), bad).toMatchObject(invalid('position'));
      expect(await fetchLog(`/-/log/proof/inclusion?position=1&tree_size=${bad}`), bad).toMatchObject(invalid('tree_size'));
      expect(await fetchLog(`/-/log/head?tree_size=${bad}`), bad).toMatchObject(invalid('tree_size'));
    }
    // Rack's query syntax: a repeated name's last value counts; `name[]` is an array.
    expect((await fetchLog(`/-/log/proof/consistency?first=1&first=2&second=${n}`)).body).toEqual((await fetchLog(`/-/log/proof/consistency?first=2&second=${n}`)).body);
    expect(await fetchLog(`/-/log/proof/consistency?first[]=1&second=${n}`)).toMatchObject(invalid('first'));
    expect(await fetchLog('/-/log/proof/consistency?first=x')).toMatchObject({ status: 400, body: { error: 'first is invalid, second is missing' } });
    // Whole numbers past PostgreSQL's integer are tree sizes and positions a long log has: answered, not refused as invalid.
    const far = 2 ** 40;
    expect(await fetchLog(`/-/log/proof/consistency?first=1&second=${far}`)).toMatchObject({ status: 400, body: { message: `400 Bad request - second is larger than the log tree (${n} leaves)` } });
    expect(await fetchLog(`/-/log/proof/inclusion?position=${far}&tree_size=${n}`)).toMatchObject({ status: 404, body: { message: '404 Leaf Not Found' } });
    expect(await fetchLog(`/-/log/head?tree_size=${far}`)).toMatchObject({ status: 404, body: { message: '404 Tree head Not Found' } });
    // The edges: the empty tree is a prefix of every tree, and every tree of itself.
    expect(await fetchLog(`/-/log/proof/consistency?first=0&second=${n}`)).toMatchObject({ status: 200, body: { consistency: [] } });
    expect(await fetchLog('/-/log/proof/consistency?first=0&second=0')).toMatchObject({ status: 200, body: { consistency: [] } });
    expect(await fetchLog(`/-/log/proof/inclusion?position=0&tree_size=${n}`)).toMatchObject({ status: 404, body: { message: '404 Leaf Not Found' } });
    expect(await fetchLog('/-/log/proof/inclusion?position=1&tree_size=0')).toMatchObject({ status: 400, body: { message: `400 Bad request - tree_size must be from 1 to the log tree's ${n} leaves` } });
  });

  it('without a signing key: no head and no public key, said plainly; proofs still answer', async () => {
    const config = api.runtime.config.logHeads;
    const key = config.signingKey;
    config.signingKey = undefined;
    try {
      for (const path of ['/-/log/head', '/-/log/public_key']) expect(await fetchLog(path)).toMatchObject({ status: 404, body: { message: '404 Log signing key Not Found' } });
      expect((await fetchLog(`/-/log/proof/consistency?first=1&second=${keptHead.treeSize}`)).status).toBe(200);
    } finally {
      config.signingKey = key;
    }
  });
});
