import { describe, expect, it } from 'vitest';
import { Notifier } from '../../src/eventstore/notifier.js';
import { itOnPostgres, openTestDatabase } from '../support/database.js';

const next = (notifier: Notifier) =>
  new Promise<readonly string[] | undefined>((resolve) => {
    const stop = notifier.onAppended((types) => {
      stop();
      resolve(types);
    });
  });

describe('Notifier', () => {
  it('coalesces the appends of a few milliseconds into one wake-up carrying their types', async () => {
    const notifier = new Notifier();
    const woken = next(notifier);
    notifier.appended(['UserStatusSet']);
    notifier.appended(['GroupCreated', 'UserStatusSet']);
    expect([...(await woken)!].sort()).toEqual(['GroupCreated', 'UserStatusSet']);
    await notifier.close();
  });

  it('says "any type" once an append did not name its types', async () => {
    const notifier = new Notifier();
    const woken = next(notifier);
    notifier.appended(['UserStatusSet']);
    notifier.appended();
    expect(await woken).toBeUndefined();
    const again = next(notifier);
    notifier.appended(['UserBlocked']);
    expect(await again).toEqual(['UserBlocked']);
    await notifier.close();
  });

  itOnPostgres('carries the types to another process through NOTIFY', async () => {
    const handle = await openTestDatabase();
    const sender = new Notifier(handle.pool);
    const receiver = new Notifier(handle.pool);
    try {
      await receiver.listen();
      const woken = next(receiver);
      sender.appended(['ProjectDeletionScheduled']);
      expect(await woken).toEqual(['ProjectDeletionScheduled']);
    } finally {
      await sender.close();
      await receiver.close();
      await handle.close();
    }
  });
});
