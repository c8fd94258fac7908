/** The bench's users: over HTTP with tokens (as clients make them), or straight through the users aggregate. */
import { DEFAULT_PROFILE } from '../../src/commands/users.js';
import type { UserCommand } from '../../src/domain/users/decider.js';
import { inParallel, reserveIds } from './setup.js';
import { run } from '../../src/commands/kernel/run.js';
import { users } from '../../src/domain/users/aggregate.js';
import type { CommandContext } from '../../src/commands/kernel/context.js';

export interface BenchUser {
  id: number;
  token: string;
}

export async function createUsersOverHttp(base: string, rootToken: string, count: number): Promise<BenchUser[]> {
  const users: BenchUser[] = [];
  const stamp = Date.now().toString(36);
  const call = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${base}/api/v4${path}`, {
      method,
      headers: { 'PRIVATE-TOKEN': rootToken, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== 201) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as { id: number; token: string };
  };
  await inParallel(
    Array.from({ length: count }, (_, i) => i),
    4,
    async (i) => {
      const username = `bench_${stamp}_${i}`;
      const user = await call('POST', '/users', { email: `${username}@example.com`, username, name: `Bench ${i}`, password: 'benchmark-password', skip_confirmation: true });
      const token = await call('POST', `/users/${user.id}/personal_access_tokens`, { name: 'bench', scopes: ['api'] });
      users[i] = { id: user.id, token: token.token };
    },
  );
  return users;
}


/** Creates users through the users aggregate (a precomputed password hash: no scrypt per user). */
export async function createUsersDirect(ctx: CommandContext, count: number, passwordHash: string, label: string): Promise<number[]> {
  const firstId = await reserveIds(ctx.db, 'users_id_seq', count);
  const ids = Array.from({ length: count }, (_, i) => firstId + i);
  const firstNamespace = await reserveIds(ctx.db, 'namespaces_id_seq', count);
  await inParallel(ids, 8, async (id, i) => {
    const username = `${label}_${id}`;
    await userCommand(ctx, id, {
      type: 'CreateUser',
      namespaceId: firstNamespace + i,
      profile: { ...DEFAULT_PROFILE, name: `Bench ${id}`, username, email: `${username}@example.com` },
      passwordHash,
      confirmed: true,
      passwordResetRequired: false,
    });
  });
  return ids;
}


export function userCommand(ctx: CommandContext, id: number, command: UserCommand) {
  return run({ ctx, metadata: { actor_id: id, actor_username: 'bench', request_id: null } }, users, id, command);
}
