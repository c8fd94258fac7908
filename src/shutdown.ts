import type { Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

/**
 * Graceful shutdown of `forgelog serve` (and, without a server, `forgelog worker`) on
 * SIGTERM or SIGINT:
 * 1. stop accepting connections (idle keep-alive connections are closed);
 * 2. answer the requests in flight, for at most `graceMs`; connections still open then are
 *    closed;
 * 3. `close()`: the workers stop between two batches and release their advisory locks, the
 *    notifier and the database pool close (Runtime.close logs each);
 * 4. the log lines still buffered are written;
 * 5. exit 0 — or 1 when closing failed or took longer than another grace period.
 * A second signal exits at once (status 1). Every step is logged.
 */
export function shutDownOnSignals(options: {
  /** The HTTP server to drain first; none for a worker. */
  server?: Server;
  graceMs: number;
  logger: Logger;
  close: () => Promise<void>;
  exit?: (code: number) => void;
}): void {
  const { server, graceMs, logger, close } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const inFlight = new Set<ServerResponse>();
  let stopping = false;
  let drained: (() => void) | undefined;
  server?.on('request', (_request, response: ServerResponse) => {
    inFlight.add(response);
    // A request that arrives on a kept-alive connection while draining is answered, and its
    // connection then closed.
    if (stopping) response.shouldKeepAlive = false;
    response.once('close', () => {
      inFlight.delete(response);
      if (drained && inFlight.size === 0) drained();
    });
  });

  const drain = async (server: Server, signal: NodeJS.Signals) => {
    const deadline = Date.now() + graceMs;
    logger.info({ signal, in_flight: inFlight.size, grace_ms: graceMs }, 'shutting down: stopped accepting connections');
    // The answers in flight say "Connection: close" and end their connections once sent.
    for (const response of inFlight) response.shouldKeepAlive = false;
    const allAnswered = new Promise<boolean>((resolve) => {
      drained = () => resolve(true);
      if (inFlight.size === 0) resolve(true);
    });
    const closed = new Promise<boolean>((resolve) => server.close(() => resolve(true)));
    server.closeIdleConnections();
    if (await Promise.race([allAnswered, delay(graceMs).then(() => false)])) logger.info('answered every request in flight');
    else logger.warn({ in_flight: inFlight.size }, 'grace period over; closing the connections of the requests still in flight');
    if (!(await Promise.race([closed, delay(Math.max(0, deadline - Date.now())).then(() => false)]))) {
      server.closeAllConnections();
      await closed;
    }
    logger.info('closed the HTTP server');
  };

  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      await flushed(logger);
      exit(1);
      return;
    }
    stopping = true;
    if (server) await drain(server, signal);
    else logger.info({ signal }, 'shutting down');
    const finished = await Promise.race([
      close().then(
        () => true,
        (error: unknown) => {
          logger.error({ err: error }, 'closing failed');
          return false;
        },
      ),
      delay(Math.max(graceMs, 1_000)).then(() => {
        logger.error('stopping the workers and closing the database took longer than the grace period');
        return false;
      }),
    ]);
    if (finished) logger.info('shut down');
    // The log is written asynchronously: every line, in order, before the process ends.
    await flushed(logger);
    exit(finished ? 0 : 1);
  };
  process.on('SIGTERM', (signal) => void stop(signal));
  process.on('SIGINT', (signal) => void stop(signal));
}

/** Resolves once the lines logged so far are written (at most a second: a stuck stdout does not hold the exit). */
function flushed(logger: Logger): Promise<void> {
  return Promise.race([new Promise<void>((resolve) => logger.flush(() => resolve())), delay(1_000)]);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
