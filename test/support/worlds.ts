import fc from 'fast-check';

/**
 * A property over random worlds, bounded in time: up to `numRuns` worlds, none started after
 * `ms`; the world under way runs to its end. fast-check's own `interruptAfterTimeLimit` would
 * abandon it mid-world, its requests going on beside the next test and into the server's
 * close() and its replay check, their failures unseen. Answers how many worlds ran.
 */
export async function checkWorlds<T>(arbitrary: fc.Arbitrary<T>, options: { numRuns: number; ms: number }, runWorld: (world: T) => Promise<void>): Promise<number> {
  const deadline = Date.now() + options.ms;
  let worlds = 0;
  await fc.assert(
    fc.asyncProperty(arbitrary, async (world) => {
      if (Date.now() > deadline) return;
      await runWorld(world);
      worlds++;
    }),
    { numRuns: options.numRuns },
  );
  return worlds;
}
