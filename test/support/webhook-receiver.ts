import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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

  close() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
