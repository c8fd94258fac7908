import { userSshKeys } from '../domain/user-ssh-keys.js';
import { parsePublicKey, sanitizeKey } from '../domain/ssh-keys.js';
import type { StoredEvent } from '../eventstore/types.js';
import { keyRestrictions } from '../projections/application-settings/queries.js';
import { fingerprintTaken } from '../projections/deploy-keys/queries.js';
import { sshKeyIdsOfUser } from '../projections/user-ssh-keys/queries.js';
import { causedBy } from './kernel/causation.js';
import type { CommandContext, Writer } from './kernel/context.js';
import type { Reactor } from './kernel/reactor.js';
import { newId, run } from './kernel/run.js';

/**
 * `user.keys.new(key:, title:).save` (POST /user/keys, POST /users/:id/keys): a new key of
 * `userId`, validated as GitLab's Key model does, its id from the keys' sequence.
 */
export async function addUserSshKey(w: Writer, userId: number, input: { readonly title: string; readonly key: string }): Promise<number> {
  const id = await newId(w, userSshKeys);
  const parsed = parsePublicKey(sanitizeKey(input.key));
  const restrictions = await keyRestrictions(w.ctx.db);
  await run(
    w,
    userSshKeys,
    id,
    async (trx) => ({
      type: 'AddUserSshKey',
      userId,
      title: input.title,
      key: input.key,
      restrictions,
      fingerprintTaken: parsed ? await fingerprintTaken(trx, parsed.fingerprint) : false,
    }),
    { newStream: true },
  );
  return id;
}

/**
 * Users::DestroyService: `user.destroy` destroys the user's keys (`has_many :keys, dependent:
 * :destroy`), each with its after_destroy callbacks — a `key_destroy` system hook per key.
 * Idempotent: a key already removed is skipped, and the runner keeps a receipt per event.
 */
export const userSshKeyRemovalReactor: Reactor = {
  name: 'user-ssh-key-removal',
  handles: ['UserDeleted'],
  async react(stored: StoredEvent, ctx: CommandContext) {
    const userId = (stored.data as { id: number }).id;
    const w = causedBy(ctx, stored);
    for (const id of await sshKeyIdsOfUser(ctx.db, userId)) {
      await run(w, userSshKeys, id, { type: 'RemoveUserSshKey', userId });
    }
  },
};
