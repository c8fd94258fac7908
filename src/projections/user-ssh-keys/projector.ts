import { defineProjector } from '../projector.js';

/**
 * Inline: the keys API reads what it just wrote. A deleted user's keys stay until the
 * `user-ssh-key-removal` reactor removes them one by one (src/commands/user-ssh-keys.ts), as
 * GitLab destroys them with their callbacks (each a `key_destroy` system hook); the queries
 * show no key of a user who is gone meanwhile.
 */
export const userSshKeysProjector = defineProjector({
  name: 'user_ssh_keys',
  tables: ['user_ssh_keys'],
  on: {
    UserSshKeyAdded: async ({ data, occurredAt }, trx) => {
      const at = occurredAt.toISOString();
      await trx
        .insertInto('user_ssh_keys')
        .values({ ...data, created_at: at, updated_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    UserSshKeyRemoved: async ({ data }, trx) => trx.deleteFrom('user_ssh_keys').where('id', '=', data.id).execute(),
  },
});
