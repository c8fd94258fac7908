/**
 * How the background loops (the sealer, the delivery sender, `events export --follow`, the Geo
 * replicator) wait between rounds: a timeout, cut short by a wake-up or an abort.
 */

export type WakeSource = (wake: () => void) => () => void;

/**
 * A wake-up source heard all along, not only while a loop waits: a wake-up that came while the
 * loop worked (an append during a seal round, a delivery recorded while others were sent) ends
 * its next wait at once. Heard only during the waits, it was lost, and the loop slept until its
 * idle poll — ten minutes while LISTEN is up.
 */
export function heardAllAlong(source: WakeSource | undefined): { subscribe: WakeSource | undefined; close: () => void } {
  if (!source) return { subscribe: undefined, close: () => {} };
  let heard = false;
  let waiting: (() => void) | undefined;
  const close = source(() => {
    if (waiting) waiting();
    else heard = true;
  });
  const subscribe: WakeSource = (wake) => {
    waiting = wake;
    if (heard) {
      heard = false;
      wake();
    }
    return () => {
      waiting = undefined;
    };
  };
  return { subscribe, close };
}

/**
 * Waits `ms`, or until woken by `subscribe`'s callback (but not before `minWaitMs`), or
 * until the signal aborts.
 */
export function sleep(
  ms: number,
  signal?: AbortSignal,
  subscribe?: (wake: () => void) => () => void,
  minWaitMs = 0,
): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const started = Date.now();
    let finished = false;
    let unsubscribe: (() => void) | undefined;
    const done = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      unsubscribe?.();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    let timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    unsubscribe = subscribe?.(() => {
      if (finished) return;
      clearTimeout(timer);
      timer = setTimeout(done, Math.max(0, Math.min(minWaitMs, ms) - (Date.now() - started)));
    });
  });
}
