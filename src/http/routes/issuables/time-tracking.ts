import { Hono, type Context } from 'hono';
import { invalid } from '../../../domain/errors.js';
import { parseTimeTracking, type TimeTrackingCommand } from '../../../domain/time-tracking.js';
import { toTimeStats } from '../../entities/merge-requests.js';
import { authenticate, requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { declaration, INT4_MAX, integerCheck, rawParams, required, t, type Shape } from '../../kernel/params.js';
import { userProject } from '../../kernel/scope.js';
import { issuablePath, type IssuableKind, type IssuableRow } from './kind.js';

/**
 * GitLab 12's API::TimeTrackingEndpoints, as API::Issues and API::MergeRequests include them:
 * the writes ask `admin_issue` / `admin_merge_request` of the issuable (`authorize!
 * admin_issuable_key, load_issuable`), `time_stats` asks to read it. Every answer is
 * Entities::IssuableTimeStats.
 */

const durationShape = { duration: required(t.string()) };

/** `requires :<issuable>_iid, type: Integer` and the route's own parameters, every failure together. */
async function declared<S extends Shape>(c: Context, kind: IssuableKind<IssuableRow>, shape: S) {
  const p = declaration(await rawParams(c));
  p.check(integerCheck(c, kind.iidParam));
  const parsed = p.parse(shape);
  p.done();
  return parsed;
}

/** Gitlab::TimeTrackingFormatter.parse (src/domain/time-tracking.ts): undefined for what is not a duration, zero included. */
const duration = (text: string): number | undefined => parseTimeTracking(text);

export function timeTrackingRoutes<Row extends IssuableRow>(kind: IssuableKind<Row>) {
  /** One time-tracking write: the project, the issuable administered, the command, the stats. */
  async function write(c: Context, shape: Shape, command: (params: Record<string, unknown>, userId: number) => TimeTrackingCommand, status: 200 | 201) {
    const w = await requireWriter(c);
    const params = await declared(c, kind, shape);
    const project = await userProject(c, w.auth);
    const row = await kind.find(c, project, 'admin');
    await kind.run(w, row.id, command(params, w.auth.user.id));
    return c.json(toTimeStats((await kind.findById(appContext(c).db, row.id))!), status);
  }

  const of = kind.collection === 'issues' ? 'an issue' : 'a merge request';
  const ON = { pathIds: [kind.iidParam] };
  const STATS = 'IssuableTimeStats';
  return new Hono<AppEnv>()
    .post(issuablePath(kind, 'time_estimate'), documented({ summary: `Set the time estimate of ${of}`, params: durationShape, ...ON, responses: { 200: STATS, ...REFUSED } }), (c) =>
      write(
        c,
        durationShape,
        ({ duration: text }) => {
          // TimeTrackable: `validates :time_estimate, numericality: { message: 'has an invalid format' }`.
          const seconds = duration(text as string);
          if (seconds === undefined || seconds < 0) throw invalid({ time_estimate: ['has an invalid format'] });
          // TimeTrackable#time_estimate= clamps to the integer column.
          return { type: 'SetTimeEstimate', seconds: Math.min(seconds, INT4_MAX) };
        },
        200,
      ),
    )

    .post(issuablePath(kind, 'reset_time_estimate'), documented({ summary: `Reset the time estimate of ${of}`, ...ON, responses: { 200: STATS, ...REFUSED } }), (c) => write(c, {}, () => ({ type: 'SetTimeEstimate', seconds: 0 }), 200))

    .post(issuablePath(kind, 'add_spent_time'), documented({ summary: `Add time spent on ${of}`, params: durationShape, ...ON, responses: { 201: STATS, ...REFUSED } }), (c) =>
      write(
        c,
        durationShape,
        ({ duration: text }, userId) => {
          // A duration GitLab cannot parse is a timelog without time_spent: the issuable's
          // `has_many :timelogs` validation answers "timelogs is invalid". One past the integer
          // column too (GitLab 12 failed with a 500 there); the decider bounds the total.
          const seconds = duration(text as string);
          if (seconds === undefined || Math.abs(seconds) > INT4_MAX) throw invalid({ timelogs: ['is invalid'] });
          return { type: 'AddSpentTime', userId, seconds };
        },
        201,
      ),
    )

    .post(issuablePath(kind, 'reset_spent_time'), documented({ summary: `Reset the time spent on ${of}`, ...ON, responses: { 200: STATS, ...REFUSED } }), (c) => write(c, {}, (_params, userId) => ({ type: 'ResetSpentTime', userId }), 200))

    .get(issuablePath(kind, 'time_stats'), documented({ summary: `The time tracking stats of ${of}`, ...ON, auth: 'optional', responses: { 200: STATS, ...REFUSED } }), async (c) => {
      // `authenticate_non_get!`: a public project's stats are anyone's.
      const auth = await authenticate(c);
      await declared(c, kind, {});
      const project = await userProject(c, auth);
      return c.json(toTimeStats(await kind.find(c, project, 'read')));
    });
}
