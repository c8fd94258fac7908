import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAggregate } from '../../src/domain/aggregate.js';
import { DEFAULT_GROUP_SETTINGS } from '../../src/commands/groups.js';
import { nextId } from '../../src/commands/kernel/handler.js';
import type { DatabaseHandle } from '../../src/database/database.js';
import type { GroupCommand, GroupState } from '../../src/domain/groups/decider.js';
import type { GroupEvent } from '../../src/domain/groups/events.js';
import { readStream } from '../../src/eventstore/store.js';
import { findGroupRow } from '../../src/projections/groups/facts.js';
import { inlineProjectors } from '../../src/projections/registry.js';
import { openTestDatabase } from '../support/database.js';
import { commandContext } from '../projections/fixtures.js';
import { run } from '../../src/commands/kernel/run.js';
import { groups } from '../../src/domain/groups/aggregate.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(() => handle.close());

const metadata = { actor_id: 1 };
const create = (path: string) => ({ type: 'CreateGroup', settings: { ...DEFAULT_GROUP_SETTINGS, name: path, path }, parent: null }) as const;

describe('the groups aggregate', () => {
  it('refuses an event its schema refuses before anything is written: no event, no claim, no row', async () => {
    const ctx = commandContext(handle, inlineProjectors());
    // A decider with a defect: its GroupCreated carries a visibility that is none of GitLab's.
    const defective = defineAggregate({
      ...groups,
      decider: {
        ...groups.decider,
        decide: (command: GroupCommand, state: GroupState) =>
          groups.decider.decide(command, state).map((event) => ({ ...event, data: { ...event.data, visibility: 'secret' } }) as unknown as GroupEvent),
      },
    });
    const id = await nextId(handle.db, 'namespaces_id_seq');
    await expect(run({ ctx, metadata }, defective, id, create('schema-check'))).rejects.toThrow(/GroupCreated does not match its schema/);
    expect(await readStream(handle.db, groups.streamId(id))).toEqual([]);
    expect(await findGroupRow(handle.db, id)).toBeUndefined();

    // The path was not claimed: the real aggregate creates the group under it.
    await run({ ctx, metadata }, groups, id, create('schema-check'));
    expect((await readStream(handle.db, groups.streamId(id))).map((e) => e.type)).toEqual(['GroupCreated']);
    expect(await findGroupRow(handle.db, id)).toMatchObject({ path: 'schema-check', visibility: 'private' });
  });
});
