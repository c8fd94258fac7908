import { Hono, type Context } from 'hono';
import { newId, run } from '../../../commands/kernel/run.js';
import { awardEmoji } from '../../../domain/award-emoji/aggregate.js';
import { awardableKey, type AwardableType } from '../../../domain/award-emoji/events.js';
import { notFound, recordNotFound } from '../../../domain/errors.js';
import { unauthorized } from '../../kernel/errors.js';
import { awardsOf, findAward } from '../../../projections/award-emoji/queries.js';
import { awardUsers, toAwardEmoji } from '../../entities/award-emoji.js';
import { requireUser, requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv, type Auth } from '../../kernel/context.js';
import { documented } from '../../kernel/documented.js';
import { paginateArray } from '../../kernel/pagination.js';
import { declared, pathId, required, t } from '../../kernel/params.js';
import { noteOf } from './find.js';
import { epicNoteable, issueNoteables, mergeRequestNoteables, snippetNoteables, type Noteable } from './noteables.js';

/**
 * GitLab 12.10's API::AwardEmoji for issues, merge requests and project snippets and their notes
 * (`/projects/:id/merge_requests/:merge_request_iid/award_emoji`, `…/notes/:note_id/award_emoji`;
 * `:issue_iid`, `:snippet_id` the same; personal snippets have none)
 * and EE's epics (`/groups/:id/epics/:epic_iid/award_emoji`, and their notes'): list, get,
 * award, remove. Authentication first (`before { authenticate! }`).
 */

/** An awardable kind: its path, the path parameter naming it, how the noteable is found. */
interface AwardableKind {
  readonly type: 'Issue' | 'MergeRequest' | 'Snippet' | 'Epic';
  readonly path: string;
  readonly idParam: string;
  find(c: Context, auth: Auth): Promise<Noteable>;
}

const KINDS: readonly AwardableKind[] = [
  { type: 'Issue', path: '/projects/:id/issues/:issue_iid', idParam: 'issue_iid', find: (c, auth) => issueNoteables.find(c, auth, 'issue_iid') },
  { type: 'MergeRequest', path: '/projects/:id/merge_requests/:merge_request_iid', idParam: 'merge_request_iid', find: (c, auth) => mergeRequestNoteables.find(c, auth, 'merge_request_iid') },
  { type: 'Snippet', path: '/projects/:id/snippets/:snippet_id', idParam: 'snippet_id', find: (c, auth) => snippetNoteables.find(c, auth, 'snippet_id') },
  { type: 'Epic', path: '/groups/:id/epics/:epic_iid', idParam: 'epic_iid', find: (c, auth) => epicNoteable(c, auth, 'epic_iid', 'iid') },
];

/** An awardable as the routes hold it: what it is, whether the caller may award, where its awards' events go. */
interface Awardable {
  readonly type: AwardableType;
  readonly id: number;
  readonly projectId: number | null;
  readonly groupId: number | null;
  readonly canAward: boolean;
  /** AwardEmoji's awardable#emoji_awardable?: a system note is not. */
  readonly emojiAwardable: boolean;
}

/**
 * The awardable the path names: the merge request or epic (found as the notes routes find
 * them, which 404s what the caller may not read), or one of its notes.
 */
async function awardableOf(c: Context, auth: Auth, kind: AwardableKind, onNote: boolean): Promise<Awardable> {
  const noteable = await kind.find(c, auth);
  const of = { projectId: noteable.data.project_id, groupId: noteable.data.group_id, canAward: noteable.can('award_emoji') };
  if (!onNote) return { type: kind.type, id: noteable.data.noteable_id!, emojiAwardable: true, ...of };
  const note = await noteOf(c, noteable);
  return { type: 'Note', id: note.id, emojiAwardable: !note.system, ...of };
}

const awardShape = { name: required(t.string()) };

function routesOf(kind: AwardableKind, onNote: boolean) {
  const endpoint = `${kind.path}${onNote ? '/notes/:note_id' : ''}/award_emoji`;
  const ids = onNote ? [kind.idParam, 'note_id'] : [kind.idParam];
  const of = onNote ? 'a note' : kind.type === 'MergeRequest' ? 'a merge request' : `an ${kind.type.toLowerCase()}`;
  return new Hono<AppEnv>()
    .get(endpoint, documented({ summary: `List the award emoji of ${of}`, pathIds: ids, responses: { 200: 'AwardEmoji[]', 404: 'Error' } }), async (c) => {
      const auth = await requireUser(c);
      await declared(c, {}, { pathIds: ids });
      const awardable = await awardableOf(c, auth, kind, onNote);
      const { db, config } = appContext(c);
      const page = await paginateArray(c, await awardsOf(db, awardable.type, awardable.id));
      const users = await awardUsers(db, page);
      return c.json(page.map((a) => toAwardEmoji(a, users, config)));
    })
    .get(`${endpoint}/:award_id`, documented({ summary: `Get an award emoji of ${of}`, pathIds: [...ids, 'award_id'], responses: { 200: 'AwardEmoji', 404: 'Error' } }), async (c) => {
      const auth = await requireUser(c);
      await declared(c, {}, { pathIds: [...ids, 'award_id'] });
      const awardable = await awardableOf(c, auth, kind, onNote);
      return c.json(await present(c, await awardOf(c, awardable)));
    })
    .post(endpoint, documented({ summary: `Award an emoji to ${of}`, params: awardShape, pathIds: ids, responses: { 201: 'AwardEmoji', 404: 'Error' } }), async (c) => {
      const w = await requireWriter(c);
      const { name } = await declared(c, awardShape, { pathIds: ids });
      const awardable = await awardableOf(c, w.auth, kind, onNote);
      if (!awardable.canAward) throw notFound('Award Emoji');
      if (!awardable.emojiAwardable) throw notFound('Award Emoji Awardable cannot be awarded emoji');
      const id = await newId(w, awardEmoji);
      await run(w, awardEmoji, awardableKey(awardable), {
        type: 'AwardEmoji',
        id,
        awardable: { awardable_type: awardable.type, awardable_id: awardable.id, project_id: awardable.projectId, group_id: awardable.groupId },
        userId: w.auth.user.id,
        name,
      });
      const award = (await findAward(appContext(c).db, awardable.type, awardable.id, id))!;
      return c.json(await present(c, award), 201);
    })
    .delete(`${endpoint}/:award_id`, documented({ summary: `Remove an award emoji of ${of}`, pathIds: [...ids, 'award_id'], responses: { 204: null, 404: 'Error' } }), async (c) => {
      const w = await requireWriter(c);
      await declared(c, {}, { pathIds: [...ids, 'award_id'] });
      const awardable = await awardableOf(c, w.auth, kind, onNote);
      const award = await awardOf(c, awardable);
      // GitLab: `unauthorized! unless award.user == current_user || current_user.admin?`.
      if (award.user_id !== w.auth.user.id && !w.auth.user.is_admin) throw unauthorized();
      await run(w, awardEmoji, awardableKey(awardable), {
        type: 'RemoveAwardEmoji',
        id: award.id,
        awardable: { awardable_type: awardable.type, awardable_id: awardable.id, project_id: awardable.projectId, group_id: awardable.groupId },
      });
      return c.body(null, 204);
    });
}

/** `awardable.award_emoji.find(params[:award_id])`. */
async function awardOf(c: Context, awardable: Awardable) {
  const id = pathId(c, 'award_id');
  const award = id === null ? undefined : await findAward(appContext(c).db, awardable.type, awardable.id, id);
  if (!award) throw recordNotFound('Award Emoji');
  return award;
}

async function present(c: Context, award: Awaited<ReturnType<typeof awardOf>>) {
  const { db, config } = appContext(c);
  return toAwardEmoji(award, await awardUsers(db, [award]), config);
}

export const awardEmojiRoutes = KINDS.reduce((app, kind) => app.route('/', routesOf(kind, false)).route('/', routesOf(kind, true)), new Hono<AppEnv>());
