import { afterEach, describe, expect, it, vi } from 'vitest';
import { heardAllAlong, sleep } from '../../src/eventstore/waits.js';

/** A wake-up source like Notifier.onAppended: every subscriber hears each emit. */
function source() {
  const listeners = new Set<() => void>();
  return {
    subscribe: (wake: () => void) => {
      listeners.add(wake);
      return () => listeners.delete(wake);
    },
    emit: () => listeners.forEach((wake) => wake()),
    get listeners() {
      return listeners.size;
    },
  };
}

/** Whether a wait has ended once every timer due by now has run (fake timers: no wall clock). */
async function endedNow(wait: Promise<void>): Promise<boolean> {
  let ended = false;
  void wait.then(() => (ended = true));
  await vi.advanceTimersByTimeAsync(0);
  return ended;
}

describe('heardAllAlong (the background loops: sealer, delivery sender, export --follow)', () => {
  afterEach(() => vi.useRealTimers());

  it('ends the next wait at once for a wake-up that came while the loop worked, and only that wait', async () => {
    vi.useFakeTimers();
    const appends = source();
    const wakeups = heardAllAlong(appends.subscribe);
    appends.emit(); // during a round: nobody waits yet
    expect(await endedNow(sleep(600_000, undefined, wakeups.subscribe))).toBe(true);
    // Heard once, used once: the following wait waits.
    const next = sleep(600_000, undefined, wakeups.subscribe);
    expect(await endedNow(next)).toBe(false);
    appends.emit(); // during the wait
    expect(await endedNow(next)).toBe(true);
    wakeups.close();
    expect(appends.listeners).toBe(0);
  });

  it('is what a loop needs: the plain source loses a wake-up that came between two waits', async () => {
    vi.useFakeTimers();
    const appends = source();
    appends.emit();
    expect(await endedNow(sleep(600_000, undefined, appends.subscribe))).toBe(false);
  });
});
