import type { Reactor } from '../projections/runner.js';

/** Every reactor: async subscribers that issue commands (asynchronous removals, fan-out). */
export const REACTORS: readonly Reactor[] = [];
