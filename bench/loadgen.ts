/**
 * The load generator: a child process (forked by bench/run.ts) running autocannon, so the
 * server under test keeps its event loop to itself. One job at a time over IPC.
 */
import autocannon from 'autocannon';

type Request = { method?: string; path?: string; headers?: Record<string, string>; body?: string };

export interface LoadJob {
  url: string;
  connections: number;
  seconds: number;
  /** Connection i sends requests[i % requests.length], the same one over and over. */
  requests: (Request & { method: string; path: string })[];
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  latency: { p50: number; p99: number; average: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

async function run(job: LoadJob): Promise<LoadResult> {
  let next = 0;
  const first = job.requests[0]!;
  const instance = autocannon({
    url: job.url,
    connections: job.connections,
    duration: job.seconds,
    timeout: 10,
    method: first.method,
    path: first.path,
    ...(first.headers ? { headers: first.headers } : {}),
    ...(first.body !== undefined ? { body: first.body } : {}),
    setupClient(client) {
      // setRequests, not setRequest: the latter only changes the request in flight.
      client.setRequests([{ ...job.requests[next++ % job.requests.length]! }]);
    },
  });
  const result = await instance;
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  return {
    requests: result.requests.total,
    seconds: result.duration,
    rps: result.requests.total / result.duration,
    latency: { p50: result.latency.p50, p99: result.latency.p99, average: result.latency.average, max: result.latency.max },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
}

process.on('message', (message: { id: number; job: LoadJob }) => {
  run(message.job).then(
    (result) => process.send!({ id: message.id, result, rss: process.memoryUsage().rss }),
    (error: unknown) => process.send!({ id: message.id, error: String((error as Error)?.stack ?? error) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send!({ ready: true });
