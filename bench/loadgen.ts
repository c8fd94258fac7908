/**
 * The load generator: a child process (forked by bench/harness/load-generator.ts) running
 * autocannon, so the server under test keeps its event loop to itself. One job at a time over IPC.
 *
 * A job with a `key` is one slice of a scenario: its raw result is kept, and `collect`
 * merges every slice of the key (requests summed, latency histograms merged), so the bench
 * can interleave scenarios in short slices and still report one figure per scenario.
 */
import autocannon from 'autocannon';

type Request = { method?: string; path?: string; headers?: Record<string, string>; body?: string };

export interface LoadJob {
  url: string;
  connections: number;
  seconds: number;
  /** Connection i sends requests[i % requests.length], the same one over and over (but see `once`). */
  requests: (Request & { method: string; path: string })[];
  /**
   * Each request is sent once instead: connection i sends requests i, i + connections, … in
   * turn, and the job ends when every one has been answered (`seconds` is then only a bound).
   */
  once?: boolean;
  /** Replace `[<id>]` in bodies with a fresh id per request (so every write changes something). */
  idReplacement?: boolean;
  /** Requests per second over all connections (autocannon's overallRate); unset: as fast as answered. */
  overallRate?: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  latency: { p50: number; p90: number; p99: number; average: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

export type LoadMessage = { id: number; job: LoadJob; key?: string } | { id: number; collect: string; url: string; connections: number };

/** What autocannon returns with skipAggregateResult (histograms still encoded). */
interface RawResult {
  totalCompletedRequests: number;
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}

const slices = new Map<string, RawResult[]>();

function options(job: LoadJob) {
  let next = 0;
  const first = job.requests[0]!;
  // autocannon's `amount` gives connection i ⌊n / connections⌋ requests, one more while i < n mod connections: its share of the requests below.
  const ofConnection = (i: number) => (job.once ? job.requests.filter((_, k) => k % job.connections === i) : [job.requests[i % job.requests.length]!]);
  return {
    url: job.url,
    connections: job.connections,
    // autocannon notices the end at its next sample (1 s apart by default), and that is its duration: a job sent once is sampled every 10 ms.
    ...(job.once ? { amount: job.requests.length, sampleInt: 10 } : { duration: job.seconds }),
    timeout: 10,
    idReplacement: job.idReplacement ?? false,
    ...(job.overallRate ? { overallRate: job.overallRate } : {}),
    method: first.method,
    path: first.path,
    ...(first.headers ? { headers: first.headers } : {}),
    ...(first.body !== undefined ? { body: first.body } : {}),
    setupClient(client: { setRequests(requests: Request[]): void }) {
      // setRequests, not setRequest: the latter only changes the request in flight.
      client.setRequests(ofConnection(next++).map((request) => ({ ...request })));
    },
  };
}

function summary(result: autocannon.Result, requests: number, seconds: number): LoadResult {
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  return {
    requests,
    seconds,
    rps: seconds > 0 ? requests / seconds : 0,
    latency: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, average: result.latency.average, max: result.latency.max },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
}

async function handle(message: LoadMessage): Promise<LoadResult> {
  if ('collect' in message) {
    const raws = slices.get(message.collect) ?? [];
    slices.delete(message.collect);
    if (raws.length === 0) throw new Error(`no slices for ${message.collect}`);
    const requests = raws.reduce((n, r) => n + r.totalCompletedRequests, 0);
    const seconds = raws.reduce((n, r) => n + r.duration, 0);
    const merged = autocannon.aggregateResult(raws, { url: message.url, connections: message.connections });
    return summary(merged, requests, seconds);
  }
  const { job, key } = message;
  if (key === undefined) {
    const result = await autocannon(options(job));
    return summary(result, result.requests.total, result.duration);
  }
  const raw = (await autocannon({ ...options(job), skipAggregateResult: true })) as unknown as RawResult;
  slices.set(key, [...(slices.get(key) ?? []), raw]);
  return {
    requests: raw.totalCompletedRequests,
    seconds: raw.duration,
    rps: raw.duration > 0 ? raw.totalCompletedRequests / raw.duration : 0,
    latency: { p50: NaN, p90: NaN, p99: NaN, average: NaN, max: NaN },
    non2xx: raw.non2xx,
    errors: raw.errors,
    timeouts: raw.timeouts,
    statusCodes: {},
  };
}

process.on('message', (message: LoadMessage) => {
  handle(message).then(
    (result) => process.send!({ id: message.id, result, rss: process.memoryUsage().rss }),
    (error: unknown) => process.send!({ id: message.id, error: String((error as Error)?.stack ?? error) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send!({ ready: true });
