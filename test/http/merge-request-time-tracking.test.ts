import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeRequestStreamId } from '../../src/domain/merge-requests/events.js';
import { startMergeRequestWorld } from '../support/merge-requests.js';
import { permissionMatrix } from '../support/matrix.js';
import type { Callers, Role } from '../support/roles.js';
import type { TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
let projects: Readonly<Record<'private' | 'public', number>>;
let mergeRequest: (projectId: number, title?: string) => Promise<number>;

beforeAll(async () => {
  ({ api, callers, projects, mergeRequest } = await startMergeRequestWorld());
});
afterAll(() => api.close());

const stats = (time_estimate: number, total_time_spent: number, human_time_estimate: string | null, human_total_time_spent: string | null) => ({
  time_estimate,
  total_time_spent,
  human_time_estimate,
  human_total_time_spent,
});

describe('POST /projects/:id/merge_requests/:iid/time_estimate and reset_time_estimate', () => {
  it.each([
    ['3h30m', 12600, '3h 30m'],
    ['1h 30m', 5400, '1h 30m'],
    ['3w1d', 460800, '3w 1d'],
    ['1.5h', 5400, '1h 30m'],
    ['1mo', 576000, '1mo'],
    ['1d', 28800, '1d'],
    ['3', 10800, '3h'],
  ])('sets %s: %i seconds, shown as %s (200)', async (duration, seconds, human) => {
    const iid = await mergeRequest(projects.private, `Estimate ${duration}`);
    const res = await api.post(`/projects/${projects.private}/merge_requests/${iid}/time_estimate`, { duration }, { token: callers.developer.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(stats(seconds, 0, human, null));
  });

  it('refuses what is not a duration (400, the estimate unchanged), and resets to 0 (200)', async () => {
    const iid = await mergeRequest(projects.private, 'Estimate');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const token = callers.developer.token;
    expect((await api.post(`${path}/time_estimate`, { duration: '1w' }, { token })).body).toEqual(stats(144000, 0, '1w', null));
    for (const duration of ['foo', '1 banana', '0', '', '-1h']) {
      const res = await api.post(`${path}/time_estimate`, { duration }, { token });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: { time_estimate: ['has an invalid format'] } });
    }
    const missing = await api.post(`${path}/time_estimate`, {}, { token });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'duration is missing' });
    expect((await api.get(`${path}/time_stats`, { token })).body).toEqual(stats(144000, 0, '1w', null));

    const reset = await api.post(`${path}/reset_time_estimate`, undefined, { token });
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual(stats(0, 0, null, null));
  });

  it('takes a JSON number as Grape coerces it to a String: hours', async () => {
    const iid = await mergeRequest(projects.private, 'Number');
    const res = await api.post(`/projects/${projects.private}/merge_requests/${iid}/time_estimate`, { duration: 2 }, { token: callers.developer.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(stats(7200, 0, '2h', null));
    const hash = await api.post(`/projects/${projects.private}/merge_requests/${iid}/time_estimate`, { duration: { a: 1 } }, { token: callers.developer.token });
    expect(hash.status).toBe(400);
    expect(hash.body).toEqual({ error: 'duration is invalid' });
  });

  it('clamps an estimate past the integer column to 2147483647, as TimeTrackable#time_estimate= does', async () => {
    const iid = await mergeRequest(projects.private, 'Huge');
    const res = await api.post(`/projects/${projects.private}/merge_requests/${iid}/time_estimate`, { duration: '99999999h' }, { token: callers.developer.token });
    expect(res.status).toBe(200);
    expect(res.body.time_estimate).toBe(2147483647);
  });
});

describe('POST /projects/:id/merge_requests/:iid/add_spent_time and reset_spent_time', () => {
  it('adds (201), subtracts with a negative duration, refuses to go below zero, and resets (200)', async () => {
    const iid = await mergeRequest(projects.private, 'Spent');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const token = callers.developer.token;

    const added = await api.post(`${path}/add_spent_time`, { duration: '1h' }, { token });
    expect(added.status).toBe(201);
    expect(added.body).toEqual(stats(0, 3600, null, '1h'));
    expect((await api.post(`${path}/add_spent_time`, { duration: '1h 30m' }, { token })).body).toEqual(stats(0, 9000, null, '2h 30m'));
    const subtracted = await api.post(`${path}/add_spent_time`, { duration: '-30m' }, { token });
    expect(subtracted.status).toBe(201);
    expect(subtracted.body).toEqual(stats(0, 7200, null, '2h'));

    const below = await api.post(`${path}/add_spent_time`, { duration: '-1w' }, { token });
    expect(below.status).toBe(400);
    expect(below.body).toEqual({ message: { base: ['Time to subtract exceeds the total time spent'] } });

    const unreadable = await api.post(`${path}/add_spent_time`, { duration: 'foo' }, { token });
    expect(unreadable.status).toBe(400);
    expect(unreadable.body).toEqual({ message: { timelogs: ['is invalid'] } });
    const huge = await api.post(`${path}/add_spent_time`, { duration: '99999999h' }, { token });
    expect(huge.status).toBe(400);
    expect(huge.body).toEqual({ message: { timelogs: ['is invalid'] } });
    expect((await api.get(`${path}/time_stats`, { token })).body).toEqual(stats(0, 7200, null, '2h'));

    const reset = await api.post(`${path}/reset_spent_time`, undefined, { token });
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual(stats(0, 0, null, null));
    // Nothing to reset is no error.
    expect((await api.post(`${path}/reset_spent_time`, undefined, { token })).status).toBe(200);
  });

  it('refuses spent time that would take the total past the integer column (the decider, whatever each amount)', async () => {
    const iid = await mergeRequest(projects.private, 'Overflow');
    const path = `/projects/${projects.private}/merge_requests/${iid}/add_spent_time`;
    const token = callers.developer.token;
    expect((await api.post(path, { duration: '596523h' }, { token })).body.total_time_spent).toBe(2147482800);
    const past = await api.post(path, { duration: '1h' }, { token });
    expect(past.status).toBe(400);
    expect(past.body).toEqual({ message: { timelogs: ['is invalid'] } });
    expect((await api.post(path, { duration: '-1h' }, { token })).body.total_time_spent).toBe(2147479200);
  });

  it('records who spent the time, and the merge request shows the same time_stats', async () => {
    const iid = await mergeRequest(projects.private, 'Who');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    await api.post(`${path}/time_estimate`, { duration: '2h' }, { token: callers.maintainer.token });
    await api.post(`${path}/add_spent_time`, { duration: '45m' }, { token: callers.maintainer.token });
    const res = await api.get(`${path}/time_stats`, { token: callers.reporter.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(stats(7200, 2700, '2h', '45m'));
    expect((await api.get(path, { token: callers.reporter.token })).body.time_stats).toEqual(stats(7200, 2700, '2h', '45m'));
    const row = await api.runtime.app.db.selectFrom('merge_requests').select('id').where('project_id', '=', projects.private).where('iid', '=', iid).executeTakeFirstOrThrow();
    const spent = (await api.events(mergeRequestStreamId(row.id))).filter((e) => e.type === 'MergeRequestTimeSpent');
    expect(spent.map((e) => e.data)).toMatchObject([{ user_id: callers.maintainer.user!.id, time_spent: 2700, reset: false }]);
  });

  it('answers 404 for an unknown iid and 400 for one that is not an integer', async () => {
    const missing = await api.post(`/projects/${projects.private}/merge_requests/9999/add_spent_time`, { duration: '1h' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Not found' });
    const bad = await api.post(`/projects/${projects.private}/merge_requests/abc/add_spent_time`, {});
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'merge_request_iid is invalid, duration is missing' });
  });
});

describe('the permission matrix (GitLab 12: admin_merge_request writes, read_merge_request reads)', () => {
  let iids: Record<'private' | 'public', number>;
  beforeAll(async () => {
    iids = { private: await mergeRequest(projects.private, 'Matrix'), public: await mergeRequest(projects.public, 'Matrix') };
  });
  const writers = (status: number) => ({ developer: status, maintainer: status, owner: status, admin: status });
  const refused = { anonymous: 401, guest: 403, reporter: 403, blocked: 403 } as const;
  const call = (endpoint: string, caller: Role, visibility: 'private' | 'public') => {
    const [method, action] = endpoint.split(' ') as [string, string];
    const path = `/projects/${projects[visibility]}/merge_requests/${iids[visibility]}/${action}`;
    const token = callers[caller].token;
    return method === 'GET' ? api.get(path, { token }) : api.post(path, { duration: '1h' }, { token });
  };
  permissionMatrix<Role, 'private' | 'public'>(
    {
      'POST time_estimate': {
        private: { ...refused, nonMember: 404, external: 404, ...writers(200) },
        public: { ...refused, nonMember: 403, external: 403, ...writers(200) },
      },
      'POST reset_time_estimate': {
        private: { ...refused, nonMember: 404, ...writers(200) },
        public: { ...refused, nonMember: 403, ...writers(200) },
      },
      'POST add_spent_time': {
        private: { ...refused, nonMember: 404, external: 404, ...writers(201) },
        public: { ...refused, nonMember: 403, external: 403, ...writers(201) },
      },
      'POST reset_spent_time': {
        private: { ...refused, nonMember: 404, ...writers(200) },
        public: { ...refused, nonMember: 403, ...writers(200) },
      },
      'GET time_stats': {
        private: { anonymous: 404, nonMember: 404, external: 404, guest: 403, reporter: 200, developer: 200, admin: 200 },
        public: { anonymous: 200, nonMember: 200, external: 200, guest: 200, reporter: 200 },
      },
    },
    async ({ endpoint, caller, visibility }) => (await call(endpoint, caller, visibility)).status,
  );
});
