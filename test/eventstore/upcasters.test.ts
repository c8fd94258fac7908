import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { currentSchemaVersion, registerEventType, upcast } from '../../src/eventstore/upcasters.js';

const renamed = z.strictObject({ title: z.string(), slug: z.string() });

describe('upcasters', () => {
  registerEventType('TestRenamed', {
    upcasters: {
      1: (data: { name: string }) => ({ title: data.name }),
      2: (data: { title: string }) => ({ title: data.title, slug: data.title.toLowerCase() }),
    },
    validate: (data) => renamed.parse(data),
  });

  it('lift a stored event through every registered version step, in order', () => {
    expect(upcast('TestRenamed', 1, { name: 'Hello' })).toEqual({ schemaVersion: 3, data: { title: 'Hello', slug: 'hello' } });
    expect(upcast('TestRenamed', 2, { title: 'Already' })).toEqual({ schemaVersion: 3, data: { title: 'Already', slug: 'already' } });
  });

  it('leave events of the current shape (and unknown types) as stored', () => {
    const data = { title: 'x', slug: 'x' };
    expect(upcast('TestRenamed', 3, data)).toEqual({ schemaVersion: 3, data });
    expect(upcast('NoUpcasters', 1, data)).toEqual({ schemaVersion: 1, data });
  });

  it('append a type at the version after its last upcaster', () => {
    expect(currentSchemaVersion('TestRenamed')).toBe(3);
    expect(currentSchemaVersion('NoUpcasters')).toBe(1);
  });

  it('refuse an upcast whose result does not pass the current schema', () => {
    registerEventType('TestBroken', { upcasters: { 1: (data: { name: string }) => ({ title: data.name }) }, validate: (data) => renamed.parse(data) });
    expect(() => upcast('TestBroken', 1, { name: 'x' })).toThrow(/TestBroken upcast from schema version 1 to 2 does not match its schema/);
  });
});
