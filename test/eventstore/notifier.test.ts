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

  it('signals a topic to its subscribers only, not as an append', async () => {
    const notifier = new Notifier();
    const heard: string[] = [];
    const stopA = notifier.onSignal('a', () => heard.push('a'));
    notifier.onSignal('b', () => heard.push('b'));
    notifier.onAppended(() => heard.push('appended'));
    notifier.signal('a');
    stopA();
    notifier.signal('a');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toEqual(['a']);
    await notifier.close();
  });

  itOnPostgres('carries a signal to another process through NOTIFY', async () => {
    const handle = await openTestDatabase();
    const sender = new Notifier(handle.pool);
    const receiver = new Notifier(handle.pool);
    try {
      await receiver.listen();
      const appended: unknown[] = [];
      receiver.onAppended((types) => appended.push(types));
      const woken = new Promise<void>((resolve) => receiver.onSignal('integration-deliveries', resolve));
      sender.signal('integration-deliveries');
      await woken;
      expect(appended).toEqual([]);
    } finally {
      await sender.close();
      await receiver.close();
      await handle.close();
    }
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

  itOnPostgres('does not hear its own NOTIFY again: its subscribers were woken once, when it appended', async () => {
    const handle = await openTestDatabase();
    const both = new Notifier(handle.pool);
    const other = new Notifier(handle.pool);
    try {
      await both.listen();
      await other.listen();
      const heard: unknown[] = [];
      const signals: string[] = [];
      both.onAppended((types) => heard.push(types));
      both.onSignal('deliveries', () => signals.push('deliveries'));
      const theOther = next(other);
      const signalled = new Promise<void>((resolve) => other.onSignal('deliveries', resolve));
      both.appended(['UserBlocked']);
      both.signal('deliveries');
      // The other listener heard both: the NOTIFYs went out, and were delivered by now.
      expect(await theOther).toEqual(['UserBlocked']);
      await signalled;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect([heard, signals]).toEqual([[['UserBlocked']], ['deliveries']]);
    } finally {
      await both.close();
      await other.close();
      await handle.close();
    }
  });
});
