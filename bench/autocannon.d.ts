// Minimal types for the part of autocannon's programmatic API the bench uses (the package ships none).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  function autocannon(options: autocannon.Options): autocannon.Instance;

  namespace autocannon {
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
      p99_9: number;
    }

    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
    }

    interface Client extends EventEmitter {
      setRequest(request: Request): void;
      setRequests(requests: Request[]): void;
      setHeaders(headers: Record<string, string>): void;
    }

    interface Options extends Request {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      pipelining?: number;
      timeout?: number;
      bailout?: number;
      /** Replace `[<id>]` in the request with a fresh id per request. */
      idReplacement?: boolean;
      /** Resolve with the raw result (encoded histograms) for aggregateResult. */
      skipAggregateResult?: boolean;
      setupClient?: (client: Client) => void;
    }

    interface Result {
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Histogram & { totalCount: number };
      requests: Histogram & { sent: number };
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
    }

    /** Merges raw results of runs made with skipAggregateResult. */
    function aggregateResult(results: readonly unknown[], options: { url: string; connections?: number }): Result;
  }

  export default autocannon;
}
