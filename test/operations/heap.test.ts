import { describe, expect, it } from 'vitest';
import { StartupError, loadConfig } from '../../src/config.js';
import { boundHeapGrowth } from '../../src/heap.js';

describe('the heap growth bound (src/heap.ts)', () => {
  it('is 100 % unless FORGELOG_HEAP_GROWING_PERCENT says otherwise; 0 leaves it to V8', () => {
    expect(loadConfig({}).heapGrowingPercent).toBe(100);
    expect(loadConfig({ FORGELOG_HEAP_GROWING_PERCENT: '50' }).heapGrowingPercent).toBe(50);
    expect(loadConfig({ FORGELOG_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
  });

  it.each(['-1', '1.5', '', 'half'])('refuses FORGELOG_HEAP_GROWING_PERCENT=%j at start', (value) => {
    expect(() => loadConfig({ FORGELOG_HEAP_GROWING_PERCENT: value })).toThrow(StartupError);
    expect(() => loadConfig({ FORGELOG_HEAP_GROWING_PERCENT: value })).toThrow(/^FORGELOG_HEAP_GROWING_PERCENT must be a whole number of percent, at least 0/);
  });

  it("sets V8's flag, unless node was given one or the bound is 0", () => {
    expect(boundHeapGrowth(0, [])).toBe(false);
    expect(boundHeapGrowth(100, ['--heap-growing-percent=30'])).toBe(false);
    expect(boundHeapGrowth(100, ['--max-old-space-size=512', '--heap_growing_percent=30'])).toBe(false);
    expect(boundHeapGrowth(100, ['--max-old-space-size=512', ''])).toBe(true);
  });
});
