import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalAccessToken, createUser } from '../../src/commands/users.js';
import { loadConfig } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/database/database.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { openTestDatabase } from '../support/database.js';
import { run } from '../../src/commands/kernel/run.js';
import { users } from '../../src/domain/users/aggregate.js';

const ROOT_TOKEN = 'the-first-root-token';
const CLI = { actor_id: null, actor_username: 'test' };

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(async () => {
  await handle.close();
});

/** A start of forgelog on the test database with FORGELOG_ROOT_TOKEN, and what it logged. */
async function start(rootToken: string | undefined, now?: Date): Promise<{ runtime: Runtime; logged: { level: number; msg: string }[]; text: string }> {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const config = { ...loadConfig({}), port: 0, logLevel: 'info', rootToken };
  const runtime = await openRuntime(config, { handle, logger, migrate: false, workers: false, ...(now ? { now: () => now } : {}) });
  return { runtime, logged: lines.map((line) => JSON.parse(line) as { level: number; msg: string }), text: lines.join('') };
}

const warnings = (logged: { level: number; msg: string }[]) => logged.filter((line) => line.level === 40).map((line) => line.msg);

describe('FORGELOG_ROOT_TOKEN after the first start', () => {
  it('is taken at the first start, and says nothing later while it is a valid token of root', async () => {
    const first = await start(ROOT_TOKEN);
    expect(first.runtime.bootstrapToken).toBe(ROOT_TOKEN);
    // Chosen by the operator: not printed.
    expect(first.text).not.toContain(ROOT_TOKEN);
    const again = await start(ROOT_TOKEN);
    expect(warnings(again.logged)).toEqual([]);
    const unset = await start(undefined);
    expect(warnings(unset.logged)).toEqual([]);
  });

  it('warns, without the token, when it is no token of this database', async () => {
    const { logged, text } = await start('a-token-set-after-the-first-start');
    expect(warnings(logged)).toEqual([
      'FORGELOG_ROOT_TOKEN is no token of this database; it is read only at the first start, when root is created, and is ignored now (mint a token with: forgelog token --user root --scopes api,sudo)',
    ]);
    expect(text).not.toContain('a-token-set-after-the-first-start');
  });

  it("warns when it is another user's token, a revoked token of root's or an expired one", async () => {
    const { runtime } = await start(ROOT_TOKEN);
    const cli = { ctx: runtime.app.commands, metadata: CLI };
    await createUser(cli, { id: 2, profile: { username: 'alice', name: 'Alice', email: 'alice@example.com' }, randomPassword: true, skipConfirmation: true });
    await createPersonalAccessToken(cli, 2, { name: 'alice', scopes: ['api'], expiresAt: null, impersonation: false, token: 'alice-token' });
    const revoked = await createPersonalAccessToken(cli, 1, { name: 'old', scopes: ['api'], expiresAt: null, impersonation: false, token: 'revoked-root-token' });
    await run(cli, users, 1, { type: 'RevokePersonalAccessToken', tokenId: revoked.tokenId, impersonation: false });
    await createPersonalAccessToken(cli, 1, { name: 'short', scopes: ['api'], expiresAt: '2099-12-31', impersonation: false, token: 'expiring-root-token' });

    const first = (token: string, now?: Date) => start(token, now).then(({ logged, text }) => ({ warning: warnings(logged)[0], text }));
    const alice = await first('alice-token');
    expect(alice.warning).toMatch(/^FORGELOG_ROOT_TOKEN is not root's token \(it belongs to another user\); it is read only at the first start/);
    const old = await first('revoked-root-token');
    expect(old.warning).toMatch(/^FORGELOG_ROOT_TOKEN is root's token, revoked; /);
    expect((await first('expiring-root-token')).warning).toBeUndefined();
    const expired = await first('expiring-root-token', new Date('2100-01-01T00:00:00Z'));
    expect(expired.warning).toMatch(/^FORGELOG_ROOT_TOKEN is root's token, expired on 2099-12-31; /);
    for (const { text } of [alice, old, expired]) expect(text).not.toMatch(/alice-token|revoked-root-token|expiring-root-token/);
  });
});
