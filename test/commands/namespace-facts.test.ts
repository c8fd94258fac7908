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
    // Another transaction is creating a subgroup: it holds the parent as createGroup does
    // and inserts the child's row, then commits while the deletion is waiting.
    const creator = await api.handle.pool!.connect();
    try {
      await creator.query('begin');
      await creator.query('select id from namespaces where id = $1 for share', [parent.id]);
      const childId = Number((await creator.query(`select nextval('namespaces_id_seq') as id`)).rows[0].id);
      const path = unique('late');
      await creator.query(
        `insert into namespaces select * from jsonb_populate_record(null::namespaces, (select to_jsonb(n) || jsonb_build_object(
           'id', $2::int, 'parent_id', n.id, 'path', $3::text, 'name', $3::text, 'full_path', n.full_path || '/' || $3,
           'full_name', n.full_name || ' / ' || $3, 'traversal_ids', n.traversal_ids || $2::int) from namespaces n where n.id = $1))`,
        [parent.id, childId, path],
      );
      const deletion = run({ ctx: api.runtime.app.commands, metadata }, groups, row.id, { type: 'ScheduleGroupDeletion', fullPath: row.full_path });
      await new Promise((resolve) => setTimeout(resolve, 300)); // the deletion now waits for the parent's row
      await creator.query('commit');
      await deletion;
      const child = await api.handle.db.selectFrom('namespaces').select('pending_delete').where('id', '=', childId).executeTakeFirstOrThrow();
      expect(child.pending_delete).toBe(true);
    } finally {
      creator.release();
    }
  });
});
