import { Hono, type Context } from 'hono';
import { can } from '../../../domain/policy/can.js';
import { projectSubjectsOf } from '../../../projections/access.js';
import { toUserBasic } from '../../entities/users.js';
import { authenticate, requireWriter } from '../../kernel/auth.js';
import { appContext, today, type AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { pageOf, setPaginationHeaders } from '../../kernel/pagination.js';
import { declaration, integerCheck, rawParams } from '../../kernel/params.js';
import { userProject } from '../../kernel/scope.js';
import { issuablePath, type IssuableKind, type IssuableRow } from './kind.js';

/**
 * GitLab 12's API::Subscriptions for issues and merge requests (`subscribed?` → 304, else
 * subscribe and present the issuable, 201) and the participants endpoint of both.
 */
export function subscriptionRoutes<Row extends IssuableRow>(kind: IssuableKind<Row>) {
  /** The subscribable's id is `requires :subscribable_id, type: String`: anything not an iid finds nothing (404). */
  async function subscribe(c: Context, type: 'Subscribe' | 'Unsubscribe') {
    const w = await requireWriter(c);
    const project = await userProject(c, w.auth);
    const row = await kind.find(c, project, 'subscribe');
    // The decider answers 304 when the caller already is (or is not) subscribed.
    await kind.run(w, row.id, { type, userId: w.auth.user.id });
    return c.json(await kind.present(c, project, (await kind.findById(appContext(c).db, row.id))!, type === 'Subscribe'), 201);
  }

  const of = kind.collection === 'issues' ? 'an issue' : 'a merge request';
  const entity = kind.collection === 'issues' ? 'Issue' : 'MergeRequest';
  const ON = { pathIds: [kind.iidParam] };
  return new Hono<AppEnv>()
    .post(issuablePath(kind, 'subscribe'), documented({ summary: `Subscribe to ${of}`, responses: { 201: entity, 304: null, ...REFUSED } }), (c) => subscribe(c, 'Subscribe'))
    .post(issuablePath(kind, 'unsubscribe'), documented({ summary: `Unsubscribe from ${of}`, responses: { 201: entity, 304: null, ...REFUSED } }), (c) => subscribe(c, 'Unsubscribe'))

    .get(issuablePath(kind, 'participants'), documented({ summary: `List the participants of ${of}`, ...ON, auth: 'optional', responses: { 200: 'UserBasic[]', ...REFUSED } }), async (c) => {
      // `authenticate_non_get!`.
      const auth = await authenticate(c);
      const p = declaration(await rawParams(c));
      p.check(integerCheck(c, kind.iidParam));
      p.done();
      const page = await pageOf(c);
      const project = await userProject(c, auth);
      const row = await kind.find(c, project, 'read');
      // Participable#participants: the author, the authors of notes (none here yet) and the
      // assignees, in that order, once each, keeping those who may read the project
      // (Ability.users_that_can_read_project).
      const { db, config } = appContext(c);
      const ids = [...new Set([row.author_id, ...row.assignee_ids])];
      const readers = new Set((await projectSubjectsOf(db, project.row.id, ids, today(c))).filter((s) => can(s, 'read_project')).map((s) => s.viewer!.id));
      const users = await db.selectFrom('users').select(['id', 'name', 'username', 'state', 'avatar_url', 'email']).where('id', 'in', ids).execute();
      const byId = new Map(users.map((u) => [u.id, u]));
      const participants = ids.filter((id) => readers.has(id)).map((id) => byId.get(id)!);
      // Kaminari.paginate_array.
      setPaginationHeaders(c, page, participants.length);
      return c.json(participants.slice(page.offset, page.offset + page.perPage).map((u) => toUserBasic(u, config)));
    });
}
