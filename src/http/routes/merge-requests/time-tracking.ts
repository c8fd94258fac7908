import { Hono, type Context } from 'hono';
import type { MergeRequestCommand } from '../../../domain/merge-requests/decider.js';
import { invalid } from '../../../domain/errors.js';
import { parseTimeTracking } from '../../../domain/time-tracking.js';
import { findMergeRequestById } from '../../../projections/merge-requests/queries.js';
import { toTimeStats } from '../../entities/merge-requests.js';
import { authenticate, requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { declaration, INT4_MAX, integerCheck, rawParams, required, t, type Shape } from '../../kernel/params.js';
import { userProject } from '../../kernel/scope.js';
import { mergeRequestOf } from './find.js';
import { run } from '../../../commands/kernel/run.js';
import { mergeRequests } from '../../../domain/merge-requests/aggregate.js';

/**
 * GitLab 12's API::TimeTrackingEndpoints as API::MergeRequests includes them: the writes ask
 * `admin_merge_request` of the merge request (`authorize! admin_issuable_key, load_issuable`),
 * `time_stats` asks `read_merge_request`. Every answer is Entities::IssuableTimeStats.
 */

const durationShape = { duration: required(t.string()) };

/** `requires :merge_request_iid, type: Integer` and the route's own parameters, every failure together. */
async function declared<S extends Shape>(c: Context, shape: S) {
  const p = declaration(await rawParams(c));
  p.check(integerCheck(c, 'merge_request_iid'));
  const parsed = p.parse(shape);
  p.done();
  return parsed;
}

/** Gitlab::TimeTrackingFormatter.parse (src/domain/time-tracking.ts): undefined for what is not a duration, zero included. */
const duration = (text: string): number | undefined => parseTimeTracking(text);

/** One time-tracking write: the project, the merge request with `admin_merge_request`, the command, the stats. */
async function write(c: Context, shape: Shape, command: (params: Record<string, unknown>, userId: number) => MergeRequestCommand, status: 200 | 201) {
  const w = await requireWriter(c);
  const params = await declared(c, shape);
  const project = await userProject(c, w.auth);
  const row = await mergeRequestOf(c, project, 'admin_merge_request');
  const { db } = appContext(c);
  await run(w, mergeRequests, row.id, command(params, w.auth.user.id));
  return c.json(toTimeStats((await findMergeRequestById(db, row.id))!), status);
}

export const mergeRequestTimeTrackingRoutes = new Hono<AppEnv>()
  .post('/projects/:id/merge_requests/:merge_request_iid/time_estimate', (c) =>
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

  .post('/projects/:id/merge_requests/:merge_request_iid/reset_time_estimate', (c) => write(c, {}, () => ({ type: 'SetTimeEstimate', seconds: 0 }), 200))

  .post('/projects/:id/merge_requests/:merge_request_iid/add_spent_time', (c) =>
    write(
      c,
      durationShape,
      ({ duration: text }, userId) => {
        // A duration GitLab cannot parse is a timelog without time_spent: the merge request's
        // `has_many :timelogs` validation answers "timelogs is invalid". One past the integer
        // column too (GitLab 12 failed with a 500 there); the decider bounds the total.
        const seconds = duration(text as string);
        if (seconds === undefined || Math.abs(seconds) > INT4_MAX) throw invalid({ timelogs: ['is invalid'] });
        return { type: 'AddSpentTime', userId, seconds };
      },
      201,
    ),
  )

  .post('/projects/:id/merge_requests/:merge_request_iid/reset_spent_time', (c) => write(c, {}, (_params, userId) => ({ type: 'ResetSpentTime', userId }), 200))

  .get('/projects/:id/merge_requests/:merge_request_iid/time_stats', async (c) => {
    // API::MergeRequests: `authenticate_non_get!` — a public project's stats are anyone's.
    const auth = await authenticate(c);
    await declared(c, {});
    const project = await userProject(c, auth);
    return c.json(toTimeStats(await mergeRequestOf(c, project, 'read_merge_request')));
  });
