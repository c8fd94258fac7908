import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, updateGroup } from '../../src/commands/groups.js';
import { createProject, updateProject } from '../../src/commands/projects.js';
import { DomainError } from '../../src/domain/errors.js';
import { findGroupRow } from '../../src/projections/groups/facts.js';
import { findProjectRow } from '../../src/projections/projects/queries.js';
import { findUserById } from '../../src/projections/users/queries.js';
import { itOnPostgres } from '../support/database.js';
import { detailOf } from '../support/decider.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { run } from '../../src/commands/kernel/run.js';
import { groups } from '../../src/domain/groups/aggregate.js';

// A command that depends on another aggregate's row (a parent group's visibility bounds its
// subgroups' and projects') reads that row inside its write transaction, under a lock: what
// the route looked up a moment earlier may have changed since.

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

const metadata = { actor_id: 1, actor_username: 'root' };
let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}`;
/** root, the caller of the commands below. */
const rootViewer = { id: 1, isAdmin: true, external: false, today: new Date().toISOString().slice(0, 10) };

async function group(visibility: string, parentId?: number) {
  const path = unique('facts');
  const res = await api.post('/groups', { name: path, path, visibility, ...(parentId ? { parent_id: parentId } : {}) });
  expect(res.status).toBe(201);
  return res.body as { id: number };
}

/** Until `count` sessions of this database wait for a lock (PostgreSQL). */
async function sessionsWaitingOnLocks(count: number) {
  for (let tries = 0; ; tries++) {
    const { rows } = await api.handle.pool!.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
    if (rows[0].n >= count) return;
    if (tries > 200) throw new Error(`${rows[0].n} sessions wait for a lock, not ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => (error instanceof DomainError ? detailOf(error, { subject: undefined, fields: undefined }) : error),
  );

describe('commands that depend on a namespace', () => {
  it('create a subgroup against the parent as it is now, not as the caller read it', async () => {
    const parent = await group('public');
    const stale = (await findGroupRow(api.handle.db, parent.id))!;
    expect((await api.put(`/groups/${parent.id}`, { visibility: 'private' })).status).toBe(200);

    const path = unique('child');
    const refused = await refusal(createGroup({ ctx: api.runtime.app.commands, metadata }, { settings: { name: path, path, visibility: 'public' }, parent: stale, creator: { id: 1, isAdmin: true } }));
    expect(refused).toMatchObject({ code: 'invalid', fields: { visibility_level: ['public is not allowed since the parent group has a private visibility.'] } });

    // A parent scheduled for deletion meanwhile takes no subgroup.
    const doomed = await group('public');
    const staleDoomed = (await findGroupRow(api.handle.db, doomed.id))!;
    expect((await api.del(`/groups/${doomed.id}`)).status).toBe(202);
    const gone = await refusal(createGroup({ ctx: api.runtime.app.commands, metadata }, { settings: { name: path, path, visibility: 'private' }, parent: staleDoomed, creator: { id: 1, isAdmin: true } }));
    expect(gone).toMatchObject({ code: 'not_found', subject: 'Group' });
  });

  it('create or open up a project against its namespace as it is now', async () => {
    const namespace = await group('public');
    const stale = (await findGroupRow(api.handle.db, namespace.id))!;
    const project = await api.post('/projects', { name: unique('p'), namespace_id: namespace.id, visibility: 'private' });
    expect(project.status).toBe(201);
    expect((await api.put(`/groups/${namespace.id}`, { visibility: 'internal' })).status).toBe(200);
    const root = (await findUserById(api.handle.db, 1))!;

    const path = unique('p');
    const created = await refusal(
      createProject({ ctx: api.runtime.app.commands, metadata }, { settings: { name: path, path, visibility: 'public' }, namespace: stale, creator: root, initializeWithReadme: false }),
    );
    expect(created).toMatchObject({ code: 'invalid' });
    expect(JSON.stringify(created)).toMatch(/visibility_level/);

    const row = (await findProjectRow(api.handle.db, project.body.id))!;
    const opened = await refusal(updateProject({ ctx: api.runtime.app.commands, metadata }, row, stale, { visibility: 'public' }, rootViewer));
    expect(opened).toMatchObject({ code: 'invalid' });
    expect(JSON.stringify(opened)).toMatch(/visibility_level/);
    expect((await api.get(`/projects/${project.body.id}`)).body.visibility).toBe('private');

    // A namespace scheduled for deletion meanwhile takes no project: POST /projects's answer
    // for a namespace it cannot use.
    const doomed = await group('public');
    const staleDoomed = (await findGroupRow(api.handle.db, doomed.id))!;
    expect((await api.del(`/groups/${doomed.id}`)).status).toBe(202);
    const gone = await refusal(
      createProject({ ctx: api.runtime.app.commands, metadata }, { settings: { name: path, path, visibility: 'private' }, namespace: staleDoomed, creator: root, initializeWithReadme: false }),
    );
    expect(gone).toMatchObject({ code: 'invalid', fields: { namespace: ['is not valid'] } });
  });

  itOnPostgres('never leave a subgroup more visible than its parent when both change at once', async () => {
    const viewer = rootViewer;
    for (let round = 0; round < 15; round++) {
      const parent = await group('public');
      const row = (await findGroupRow(api.handle.db, parent.id))!;
      const path = unique('race');
      const [lowered, created] = await Promise.all([
        refusal(updateGroup({ ctx: api.runtime.app.commands, metadata }, row, { visibility: 'private' }, viewer)),
        refusal(createGroup({ ctx: api.runtime.app.commands, metadata }, { settings: { name: path, path, visibility: 'public' }, parent: row, creator: { id: 1, isAdmin: true } })),
      ]);
      // One of the two wins; the other is refused, never both applied.
      expect([lowered, created].filter((outcome) => outcome === undefined)).toHaveLength(1);
      const now = (await api.get(`/groups/${parent.id}/subgroups`)).body as { visibility: string }[];
      const parentNow = (await findGroupRow(api.handle.db, parent.id))!;
      if (parentNow.visibility === 'private') expect(now.filter((g) => g.visibility !== 'private')).toEqual([]);
    }
  });

  // The groups projector updates the group's own row before marking its subtree; the
  // other order would mark the subtree from a snapshot taken before the subgroup committed.
  itOnPostgres('mark a subgroup committed while the deletion waited for its parent', async () => {
    const parent = await group('private');
    const row = (await findGroupRow(api.handle.db, parent.id))!;
    // A subgroup is being created through the command path: its transaction holds the parent
    // (for share, as createGroup does) and is held there by another session's uncommitted
    // claim on the same path, until the deletion waits for the parent's row too.
    const path = unique('late');
    const holder = await api.handle.pool!.connect();
    try {
      await holder.query('begin');
      await holder.query(`insert into claims (kind, key, stream_id) values ('group_path', $1, 'held-by-the-test')`, [`${parent.id}/${path}`]);
      const creation = createGroup({ ctx: api.runtime.app.commands, metadata }, { settings: { name: path, path, visibility: 'private' }, parent: row, creator: { id: 1, isAdmin: true } });
      await sessionsWaitingOnLocks(1);
      const deletion = run({ ctx: api.runtime.app.commands, metadata }, groups, row.id, { type: 'ScheduleGroupDeletion', fullPath: row.full_path });
      await sessionsWaitingOnLocks(2);
      await holder.query('rollback');
      const created = await creation;
      await deletion;
      const child = await api.handle.db.selectFrom('namespaces').select('pending_delete').where('id', '=', created.state.id).executeTakeFirstOrThrow();
      expect(child.pending_delete).toBe(true);
    } finally {
      holder.release();
    }
  });
});
