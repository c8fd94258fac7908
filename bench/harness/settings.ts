/** The bench's settings, from BENCH_* variables (bench/README.md, "Settings"). */
const env = process.env;
const num = (value: string | undefined, fallback: number) => (value !== undefined && value !== '' && Number.isFinite(Number(value)) ? Number(value) : fallback);
/** Black-box phase: rounds of interleaved pairs, the slice of each side in a round, the warm-up before the first round. */
export const ROUNDS = Math.max(1, num(env.BENCH_ROUNDS, 3));
export const SLICE_SECONDS = num(env.BENCH_SLICE_SECONDS, 2);
export const WARMUP_SECONDS = num(env.BENCH_WARMUP_SECONDS, 1);
/** Connections of the load generator (GPT's criteria are judged at this concurrency). */
export const CONNECTIONS = num(env.BENCH_CONNECTIONS, 32);
/** Pool of the bare server (the same as forgelog's default). */
export const BARE_POOL = num(env.BENCH_BARE_POOL, 10);
/** Project creation: clients and seconds. */
export const CREATE_CLIENTS = num(env.BENCH_CREATE_CLIENTS, 8);
export const CREATE_SECONDS = num(env.BENCH_CREATE_SECONDS, 10);
/** Idle statement rate: seconds to let the server settle, then seconds counted. */
export const IDLE_SETTLE_SECONDS = num(env.BENCH_IDLE_SETTLE_SECONDS, 11);
export const IDLE_SECONDS = num(env.BENCH_IDLE_SECONDS, 10);
/** The black-box data set (bench/README.md, "Data set"). */
export const USER_COUNT = Math.max(2, num(env.BENCH_USERS, 200));
export const GROUP_COUNT = Math.max(1, num(env.BENCH_GROUPS, 2000));
export const PROJECT_COUNT = Math.max(1, num(env.BENCH_PROJECTS, 10_000));
export const MR_COUNT = Math.max(1, num(env.BENCH_MRS, 2000));
export const COMMIT_COUNT = num(env.BENCH_COMMITS, 500);
export const BRANCH_COUNT = Math.max(2, num(env.BENCH_BRANCHES, 100));
/** Requests the seed sends at once. */
export const SEED_CLIENTS = Math.max(1, num(env.BENCH_SEED_CLIENTS, 8));
/** In-process phase: seconds and connections per endpoint (statements and CPU per request). */
export const EXPLAIN_SECONDS = num(env.BENCH_EXPLAIN_SECONDS, 1);
export const EXPLAIN_CONNECTIONS = num(env.BENCH_EXPLAIN_CONNECTIONS, 4);
/** BENCH_EXPLAIN=1: EXPLAIN ANALYZE of every SELECT one request of each list sends (in-process phase). */
export const EXPLAIN = env.BENCH_EXPLAIN === '1';

// The deep-dive phases (not in the default run).
export const SECONDS = num(env.BENCH_SECONDS, 5);
export const APPEND_SECONDS = num(env.BENCH_APPEND_SECONDS, Math.max(1, Math.round(SECONDS * 0.6)));
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
/** BENCH_KEEP=1: keep the bench's databases at the end (to query them, e.g. EXPLAIN a rewrite). */
export const KEEP = env.BENCH_KEEP === '1';
/** BENCH_POOL: pool size of the app and of the bare routes (default: openDatabase's). */
export const POOL_SIZE = env.BENCH_POOL ? num(env.BENCH_POOL, 10) : undefined;
/** BENCH_WORKERS=0: no in-process async workers (like a `serve` told not to run them). */
export const WORKERS = env.BENCH_WORKERS !== '0';
/** BENCH_TRACE=1 prints the statements the app sent per request / command / replayed event. */
export const TRACE = env.BENCH_TRACE === '1';
export const SERVER_URL = env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
