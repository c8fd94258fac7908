import { describe, expect, it } from 'vitest';
import { registerUpcaster, upcast } from '../../src/eventstore/upcasters.js';

describe('upcasters', () => {
  it('lift a stored event through every registered version step, in order', () => {
    registerUpcaster('TestRenamed', 1, (data: { name: string }) => ({ title: data.name }));
    registerUpcaster('TestRenamed', 2, (data: { title: string }) => ({ title: data.title, slug: data.title.toLowerCase() }));
    expect(upcast('TestRenamed', 1, { name: 'Hello' })).toEqual({ schemaVersion: 3, data: { title: 'Hello', slug: 'hello' } });
    expect(upcast('TestRenamed', 2, { title: 'Already' })).toEqual({ schemaVersion: 3, data: { title: 'Already', slug: 'already' } });
  });

  it('leave events of the current shape (and unknown types) as stored', () => {
    const data = { title: 'x', slug: 'x' };
    expect(upcast('TestRenamed', 3, data)).toEqual({ schemaVersion: 3, data });
    expect(upcast('NoUpcasters', 1, data)).toEqual({ schemaVersion: 1, data });
  });
});
