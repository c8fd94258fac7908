import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SenderOptions } from '../../src/commands/integration-delivery-sender.js';

/** A local HTTP server that records every request a delivery makes (chat integrations, webhooks) and answers 200. */
export class WebhookReceiver {
  readonly received: { path: string; contentType: string | undefined; body: string; headers: IncomingHttpHeaders }[] = [];
  private server!: Server;
  url = '';

  async start() {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        this.received.push({ path: req.url ?? '', contentType: req.headers['content-type'], body, headers: req.headers });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  at(path: string) {
    return this.received.filter((r) => r.path === path);
  }

  /**
   * The requests to `path` once there are `count` of them, calling `send` (the delivery
   * sender's round) meanwhile: a deadline rather than a number of rounds, since on a loaded
   * machine the reactors may take long to write the deliveries.
   */
  async awaitRequests(path: string, count: number, send: () => Promise<unknown>, timeoutMs = 60_000) {
    for (const deadline = Date.now() + timeoutMs; this.at(path).length < count && Date.now() < deadline; ) {
      await send();
      if (this.at(path).length < count) await new Promise((r) => setTimeout(r, 25));
    }
    return this.at(path);
  }

  close() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The delivery sender as the delivery tests run it: at `clock` (a time past every retry), and
 * one delivery at a time, in the order they were made — the sender sends a batch's deliveries
 * concurrently, and the tests compare the order received.
 */
export const orderedSender = (clock: Date): SenderOptions => ({ backoffMs: 60_000, maxAttempts: 3, timeoutMs: 5_000, now: () => clock, batchSize: 1 });
