import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { run } from '../../src/commands/kernel/run.js';
import { users } from '../../src/domain/users/aggregate.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

const metadata = { actor_id: 1, actor_username: 'root' };

describe('the users aggregate', () => {
  it('appends nothing when the decider emits a payload its event schema refuses', async () => {
    const { user } = await api.createUser();
    const stream = `user-${user.id}`;
    const before = await api.events(stream);
    // The decider does not check the date; the event's schema does (expires_at is an ISO date).
    const command = { type: 'CreatePersonalAccessToken', tokenId: 2_000_000_000, name: 'ci', scopes: ['api'], expiresAt: 'next week', impersonation: false, tokenDigest: 'digest' } as const;
    await expect(run({ ctx: api.runtime.app.commands, metadata }, users, user.id, command)).rejects.toThrow(/PersonalAccessTokenCreated does not match its schema/);
    expect(await api.events(stream)).toEqual(before);
    expect(await api.handle.db.selectFrom('personal_access_tokens').select('id').where('id', '=', command.tokenId).executeTakeFirst()).toBeUndefined();
  });
});
