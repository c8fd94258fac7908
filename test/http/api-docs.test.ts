import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/** Debian's chromium (`apt-get install chromium`; .ci/run installs it). */
const CHROMIUM = '/usr/bin/chromium';
const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable) console.warn(`/api/docs browser spec skipped: ${CHROMIUM} is absent (install the Debian package chromium).`);

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

/** The page's DOM once its scripts have run, as headless Chromium renders it. */
function renderedDom(url: string): Promise<string> {
  const profile = mkdtempSync(join(tmpdir(), 'forgelog-chromium-'));
  const flags = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-dev-shm-usage',
    `--user-data-dir=${profile}`,
    '--virtual-time-budget=20000',
    '--dump-dom',
    url,
  ];
  return new Promise((resolve, reject) => {
    execFile(CHROMIUM, flags, { timeout: 90_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      rmSync(profile, { recursive: true, force: true });
      if (error) return reject(new Error(`chromium failed: ${error.message}\n${stderr}`));
      resolve(stdout);
    });
  });
}

describe('GET /api/docs', () => {
  it('serves the reference page and its scripts itself, to anyone', async () => {
    const page = await fetch(`${api.url}/api/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    // Nothing from elsewhere: every script and style is one of ours.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    for (const asset of [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)) {
      const res = await fetch(`${api.url}${asset}`);
      expect(res.status, asset).toBe(200);
      expect((await res.text()).length, asset).toBeGreaterThan(0);
    }
    expect((await fetch(`${api.url}/api/docs/package.json`)).status).toBe(404);
  });

  it.skipIf(!chromiumAvailable)('renders the endpoints in headless Chromium', async () => {
    // A deep link to one operation: Swagger UI renders the operations near it (its list is virtual).
    const dom = await renderedDom(`${api.url}/api/docs#/milestones/getProjectsIdMilestones`);
    const has = (text: string) => ({ text, found: dom.includes(text) });
    expect(has('forgelog: GitLab API v4')).toEqual({ text: 'forgelog: GitLab API v4', found: true });
    // Swagger UI writes each operation's path in data-path, and its summary beside it.
    expect(has('data-path="/api/v4/projects/{id}/milestones"')).toEqual({ text: 'data-path="/api/v4/projects/{id}/milestones"', found: true });
    expect(has('List project milestones')).toEqual({ text: 'List project milestones', found: true });
  });
});
