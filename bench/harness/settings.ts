/** The bench's settings, from BENCH_* variables (bench/README.md, "Settings"). */
import { availableParallelism } from 'node:os';

const env = process.env;
const num = (value: string | undefined, fallback: number) => (value !== undefined && value !== '' && Number.isFinite(Number(value)) ? Number(value) : fallback);
export const SECONDS = num(env.BENCH_SECONDS, 5);
/** Scenarios compared with each other run interleaved in slices of this length. */
export const SLICE_SECONDS = num(env.BENCH_SLICE_SECONDS, 1);
export const WARMUP_SECONDS = num(env.BENCH_WARMUP_SECONDS, 1);
export const APPEND_SECONDS = num(env.BENCH_APPEND_SECONDS, Math.max(1, Math.round(SECONDS * 0.6)));
export const CONNECTIONS = num(env.BENCH_CONNECTIONS, 50);
export const USERS = num(env.BENCH_USERS, CONNECTIONS);
export const REBUILD_EVENTS = num(env.BENCH_REBUILD_EVENTS, 100_000);
/** Log order of the seeded events: `streams` (user by user) or `waves` (see seedUserEvents). */
export const SEED_ORDER = env.BENCH_SEED === 'waves' ? 'waves' : 'streams';
/** Seeding transactions running at once (500 streams each). */
export const SEED_PARALLEL = num(env.BENCH_SEED_PARALLEL, 8);
/** BENCH_BASELINE=1: the rebuild phase also replays through apply() per event. */
export const BASELINE = env.BENCH_BASELINE === '1';
export const WRITER_LEVELS = (env.BENCH_WRITERS ?? '1,8,32').split(',').map(Number).filter((n) => n > 0);
/** Streams per append level, shared among its writers (keeps stream length alike across levels). */
export const APPEND_STREAMS = num(env.BENCH_APPEND_STREAMS, 256);
/** Group-list scenarios (own database): groups, projects, users who own and join them, and the regular caller's groups. */
export const GROUP_COUNT = num(env.BENCH_GROUPS, 10_000);
export const PROJECT_COUNT = num(env.BENCH_PROJECTS, 50_000);
export const GROUP_USERS = Math.max(1, num(env.BENCH_GROUP_USERS, 500));
export const MEMBER_GROUPS = num(env.BENCH_MEMBER_GROUPS, 300);
/** Processes seeding the groups (node's side of seeding is CPU-bound): one per core, at most 4. */
export const SEED_WORKERS = Math.max(1, num(env.BENCH_SEED_WORKERS, Math.min(4, availableParallelism())));
/** Slices of the group lists: at least 2 s (a slow list answers nothing within a 1 s slice at 50 connections). */
export const GROUP_SLICE_SECONDS = num(env.BENCH_GROUP_SLICE_SECONDS, Math.max(2, SLICE_SECONDS));
/** BENCH_GROUPS_VACUUM=1: `vacuum analyze` after the seed instead of `analyze` (flushes the GIN pending lists). */
export const GROUPS_VACUUM = env.BENCH_GROUPS_VACUUM === '1';
/** Seconds per group-list scenario at 1 connection (unloaded latency); 0 skips them. */
export const UNLOADED_SECONDS = num(env.BENCH_UNLOADED_SECONDS, 2);
/** BENCH_EXPLAIN=1: EXPLAIN ANALYZE of every SELECT one request of each group-list scenario sends. */
export const EXPLAIN = env.BENCH_EXPLAIN === '1';
/** BENCH_KEEP=1: keep the bench's databases at the end (to query them, e.g. EXPLAIN a rewrite). */
export const KEEP = env.BENCH_KEEP === '1';
/** BENCH_POOL: pool size of the app and of the bare routes (default: openDatabase's). */
export const POOL_SIZE = env.BENCH_POOL ? num(env.BENCH_POOL, 10) : undefined;
/** BENCH_WORKERS=0: no in-process async workers (like a `serve` told not to run them). */
export const WORKERS = env.BENCH_WORKERS !== '0';
/** BENCH_WHATIF=1 adds the what-if routes to the reads and writes (see twoSelectApp, leanWriteApp). */
export const WHATIF = env.BENCH_WHATIF === '1';
/** BENCH_TRACE=1 prints the statements the app sent per request / command / replayed event. */
export const TRACE = env.BENCH_TRACE === '1';
export const SERVER_URL = env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
