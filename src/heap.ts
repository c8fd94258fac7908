import v8 from 'node:v8';

/**
 * How far V8 lets the heap grow before its next full garbage collection, for the processes
 * that run for long (`serve`, `worker`).
 *
 * Under load a request's short-lived objects outlive two scavenges while it waits on the
 * database, so they are promoted and the old space fills with garbage. Left to its own
 * heuristics, V8 then grows the heap to about four times what survived its last full
 * collection before it collects again: `GET /groups/:id` at 32 connections took the process
 * from 117 to 269 MB resident, with 35 MB alive. Bounded at twice (100 %), the same load
 * peaks at 166–178 MB and answers as many requests (README.md, "Memory"); at 15 % it
 * peaks at 142 MB but answers a fifth fewer.
 *
 * The flag is read at every full collection, so setting it once the process runs takes
 * effect. A `--heap-growing-percent` given to node itself (NODE_OPTIONS, the command line)
 * is the operator's and wins; 0 leaves V8's own choice.
 */
export function boundHeapGrowth(percent: number, nodeFlags: readonly string[] = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]): boolean {
  if (percent === 0 || nodeFlags.some((flag) => /^--heap[-_]growing[-_]percent\b/.test(flag))) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
  return true;
}
