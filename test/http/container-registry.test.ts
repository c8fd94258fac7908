import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig, StartupError } from '../../src/config.js';
import { REGEXP_MAX_LENGTH } from '../../src/domain/container-repositories/cleanup.js';
import { CLEANUP_TOO_SOON } from '../../src/domain/container-repositories/decider.js';
import { createGroup, createProject, eventually, settled, type ProjectFixture } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

const SECRET = 'registry-notification-secret';
const HOST = 'registry.test:5050';
const DOCKER = 'application/vnd.docker.distribution.events.v1+json';
const CONFIG_TYPE = 'application/vnd.docker.container.image.v1+json';
const LAYER_TYPE = 'application/vnd.docker.image.rootfs.diff.tar.gzip';

// The command clock, moved by the tests (the hourly limit of bulk deletions).
let clock = new Date('2030-03-01T10:00:00.000Z');
let api: TestServer;
beforeAll(async () => {
  api = await startTestServer({ registryNotificationSecret: SECRET, registryHost: HOST }, { now: () => clock });
  await settled(api);
});
afterAll(() => api.close());

let counter = 0;
const hex = (n: number, c: string) => `${c.repeat(63)}${n % 10}`;

interface PushOptions {
  readonly digest?: string;
  readonly at?: string;
  readonly id?: string;
  readonly references?: boolean;
}

/** A push notification as the Docker registry (distribution 2.7) sends it. */
function pushEvent(repository: string, tag: string, options: PushOptions = {}) {
  const n = ++counter;
  return {
    id: options.id ?? `evt-${n}-${process.pid}`,
    timestamp: options.at ?? '2030-03-01T09:00:00.000Z',
    action: 'push',
    target: {
      mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
      size: 527,
      digest: options.digest ?? `sha256:${hex(n, 'd')}`,
      length: 527,
      repository,
      url: `https://${HOST}/v2/${repository}/manifests/sha256:${hex(n, 'd')}`,
      tag,
      ...(options.references === false
        ? {}
        : {
            references: [
              { mediaType: CONFIG_TYPE, size: 1500, digest: `sha256:${hex(n, 'c')}` },
              { mediaType: LAYER_TYPE, size: 1000, digest: `sha256:${hex(n, 'a')}` },
              { mediaType: LAYER_TYPE, size: 234, digest: `sha256:${hex(n, 'b')}` },
            ],
          }),
    },
    request: { id: 'r', addr: '10.0.0.1', host: HOST, method: 'PUT', useragent: 'docker/19.03' },
    actor: { name: 'root' },
    source: { addr: 'registry:5000', instanceID: 'i' },
  };
}

async function notify(events: unknown, options: { secret?: string | null; contentType?: string; raw?: string } = {}) {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? DOCKER };
  const secret = options.secret === undefined ? SECRET : options.secret;
  if (secret !== null) headers.authorization = secret;
  const response = await fetch(`${api.apiUrl}/container_registry_event/events`, { method: 'POST', headers, body: options.raw ?? JSON.stringify({ events }) });
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('application/json');
  return { status: response.status, body: json ? JSON.parse(text) : text };
}

/** Pushes the tags and answers the repository as the API lists it. */
async function repositoryWith(project: ProjectFixture, name: string, tags: readonly { tag: string; at?: string }[]) {
  const path = name === '' ? project.path_with_namespace : `${project.path_with_namespace}/${name}`;
  expect(await notify(tags.map(({ tag, at }) => pushEvent(path, tag, at ? { at } : {})))).toEqual({ status: 200, body: 200 });
  const listed = (await api.get(`/projects/${project.id}/registry/repositories`, { query: { per_page: 100 } })).body as any[];
  return listed.find((r) => r.name === name);
}

const eventTypes = async (id: number) => (await api.events(`container_repository-${id}`)).map((e) => e.type);
const tagNames = async (projectId: number, id: number) => ((await api.get(`/projects/${projectId}/registry/repositories/${id}/tags`, { query: { per_page: 100 } })).body as any[]).map((t) => t.name);

// ───────────────────────────── Configuration ─────────────────────────────

describe('FORGELOG_REGISTRY_HOST and FORGELOG_REGISTRY_NOTIFICATION_SECRET', () => {
  it("default to GitLab's registry.host (example.com) and no secret; a host with a path or a space is refused at start", () => {
    expect(loadConfig({})).toMatchObject({ registryHost: 'example.com', registryNotificationSecret: undefined });
    expect(loadConfig({ FORGELOG_REGISTRY_HOST: 'registry.example.com:5050', FORGELOG_REGISTRY_NOTIFICATION_SECRET: 's' })).toMatchObject({
      registryHost: 'registry.example.com:5050',
      registryNotificationSecret: 's',
    });
    for (const host of ['registry.example.com/v2', 'a b']) expect(() => loadConfig({ FORGELOG_REGISTRY_HOST: host })).toThrow(StartupError);
  });
});

// ───────────────────────────── Notifications ─────────────────────────────

describe('POST /container_registry_event/events', () => {
  it('creates the repository on a push and records the tag with its digest, revision, size and creation time', async () => {
    const project = await createProject(api);
    const event = pushEvent(project.path_with_namespace, 'v1.0', { at: '2030-02-01T08:30:00.123Z' });
    expect(await notify([event])).toEqual({ status: 200, body: 200 });
    const list = await api.get(`/projects/${project.id}/registry/repositories`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      { id: expect.any(Number), name: '', path: project.path_with_namespace, project_id: project.id, location: `${HOST}/${project.path_with_namespace}`, created_at: expect.any(String) },
    ]);
    const id = list.body[0].id;
    const detail = await api.get(`/projects/${project.id}/registry/repositories/${id}/tags/v1.0`);
    expect(detail.status).toBe(200);
    const revision = event.target.references![0]!.digest.slice('sha256:'.length);
    expect(detail.body).toEqual({
      name: 'v1.0',
      path: `${project.path_with_namespace}:v1.0`,
      location: `${HOST}/${project.path_with_namespace}:v1.0`,
      revision,
      short_revision: revision.slice(0, 9),
      digest: event.target.digest,
      created_at: '2030-02-01T08:30:00.123Z',
      total_size: 1234,
    });
    expect(await eventTypes(id)).toEqual(['ContainerRepositoryCreated', 'ContainerRepositoryTagPushed']);
  });

  it('names a repository below the project by the rest of its path, lower-case', async () => {
    const group = await createGroup(api);
    const project = await createProject(api, { group });
    const repository = await repositoryWith(project, 'images/web', [{ tag: 'latest' }]);
    expect(repository).toMatchObject({ name: 'images/web', path: `${project.path_with_namespace}/images/web`, location: `${HOST}/${project.path_with_namespace}/images/web` });
  });

  it('takes the manifest size for total_size and no revision when the registry names no references', async () => {
    const project = await createProject(api);
    expect((await notify([pushEvent(project.path_with_namespace, 'bare', { references: false })])).status).toBe(200);
    const [repository] = (await api.get(`/projects/${project.id}/registry/repositories`)).body;
    expect((await api.get(`/projects/${project.id}/registry/repositories/${repository.id}/tags/bare`)).body).toMatchObject({ revision: null, short_revision: null, total_size: 527 });
  });

  it('applies a notification delivered twice once, and a second push to the same repository', async () => {
    const project = await createProject(api);
    const event = pushEvent(project.path_with_namespace, 'v1', { id: `once-${process.pid}` });
    expect((await notify([event, event])).status).toBe(200);
    expect((await notify([event, pushEvent(project.path_with_namespace, 'v2')])).status).toBe(200);
    const [repository] = (await api.get(`/projects/${project.id}/registry/repositories`)).body;
    expect(await eventTypes(repository.id)).toEqual(['ContainerRepositoryCreated', 'ContainerRepositoryTagPushed', 'ContainerRepositoryTagPushed']);
    expect(await tagNames(project.id, repository.id)).toEqual(['v1', 'v2']);
  });

  it('removes a tag on a delete of the tag, and every tag of a deleted manifest', async () => {
    const project = await createProject(api);
    const digest = `sha256:${'e'.repeat(64)}`;
    const path = project.path_with_namespace;
    expect((await notify([pushEvent(path, 'a', { digest }), pushEvent(path, 'b', { digest }), pushEvent(path, 'c'), pushEvent(path, 'd')])).status).toBe(200);
    const [repository] = (await api.get(`/projects/${project.id}/registry/repositories`)).body;
    expect((await notify([{ id: 'del-1', action: 'delete', target: { repository: path, tag: 'c' } }])).status).toBe(200);
    expect(await tagNames(project.id, repository.id)).toEqual(['a', 'b', 'd']);
    expect((await notify([{ id: 'del-2', action: 'delete', target: { repository: path, digest } }])).status).toBe(200);
    expect(await tagNames(project.id, repository.id)).toEqual(['d']);
  });

  it('ignores what names no project, pulls, and what is not in the registry grammar', async () => {
    const project = await createProject(api);
    const before = (await api.get('/events', { query: { per_page: 1 } })).status;
    expect(before).toBe(200);
    const res = await notify([
      pushEvent('nobody/nothing', 'v1'),
      { ...pushEvent(project.path_with_namespace, 'v1'), action: 'pull' },
      pushEvent(`${project.path_with_namespace}/a/b/c`, 'v1'),
      pushEvent(project.path_with_namespace, '-bad'),
      pushEvent(`${project.path_with_namespace.toUpperCase()}`, 'v1'),
      { action: 'push' },
      'not an event',
      { action: 'push', target: { repository: project.path_with_namespace } },
    ]);
    expect(res).toEqual({ status: 200, body: 200 });
    expect((await api.get(`/projects/${project.id}/registry/repositories`)).body).toEqual([]);
  });

  it('refuses a missing or wrong secret with 401, and records nothing', async () => {
    const project = await createProject(api);
    for (const secret of [null, 'wrong', `${SECRET}x`, '', `Bearer ${SECRET}`]) {
      expect(await notify([pushEvent(project.path_with_namespace, 'v1')], { secret })).toEqual({ status: 401, body: { message: '401 Unauthorized' } });
    }
    expect((await api.get(`/projects/${project.id}/registry/repositories`)).body).toEqual([]);
  });

  it('reads application/json as well, and answers Grape for another media type, a bad body or no events', async () => {
    const project = await createProject(api);
    expect((await notify([pushEvent(project.path_with_namespace, 'json')], { contentType: 'application/json' })).status).toBe(200);
    expect((await api.get(`/projects/${project.id}/registry/repositories`)).body).toHaveLength(1);
    expect(await notify([], { contentType: 'text/plain' })).toEqual({ status: 415, body: { error: "The provided content-type 'text/plain' is not supported." } });
    expect(await notify(null, { raw: '{"events": [' })).toMatchObject({ status: 400, body: { error: expect.stringContaining('message body does not match declared format') } });
    expect(await notify(null, { raw: '{}' })).toEqual({ status: 400, body: { error: 'events is missing' } });
    expect(await notify('push')).toEqual({ status: 400, body: { error: 'events is invalid' } });
  });

  it('skips (and logs) an event whose timestamp PostgreSQL cannot store, records the others of the batch, and answers 200', async () => {
    const project = await createProject(api);
    const path = project.path_with_namespace;
    const warn = vi.spyOn(api.runtime.logger, 'warn');
    try {
      const res = await notify([
        pushEvent(path, 'year-zero', { at: '0000-01-01' }),
        pushEvent(path, 'kept', { at: '2030-02-01T08:30:00.000Z' }),
        pushEvent(path, 'past-javascript', { at: '+275760-09-13T00:00:00Z' }),
        pushEvent(path, 'year-ten-thousand', { at: '+010000-01-01T00:00:00Z' }),
        pushEvent(path, 'also-kept'),
      ]);
      // GitLab: API::ContainerRegistryEvent answers `status :ok` once every event is handled.
      expect(res).toEqual({ status: 200, body: 200 });
      const [repository] = (await api.get(`/projects/${project.id}/registry/repositories`)).body;
      expect(await tagNames(project.id, repository.id)).toEqual(['also-kept', 'kept']);
      expect((await api.get(`/projects/${project.id}/registry/repositories/${repository.id}/tags/kept`)).body.created_at).toBe('2030-02-01T08:30:00.000Z');
      expect(await eventTypes(repository.id)).toEqual(['ContainerRepositoryCreated', 'ContainerRepositoryTagPushed', 'ContainerRepositoryTagPushed']);
      const skipped = warn.mock.calls.filter(([, message]) => message === 'container registry event skipped');
      expect(skipped.map(([fields]) => (fields as { tag: string }).tag)).toEqual(['year-zero', 'past-javascript', 'year-ten-thousand']);
    } finally {
      warn.mockRestore();
    }
  });

  it('answers hostile bodies with 4xx: a NUL character, JSON nested too deeply, huge numbers and strings', async () => {
    const project = await createProject(api);
    const nul = await notify(null, { raw: JSON.stringify({ events: [pushEvent(`${project.path_with_namespace}\u0000x`, 'v1')] }) });
    // Gitlab::Middleware::HandleNullBytes, before routing.
    expect(nul).toEqual({ status: 400, body: 'Bad Request' });
    let nested: unknown = 'deep';
    for (let i = 0; i < 40; i++) nested = [nested];
    expect(await notify(nested)).toEqual({ status: 400, body: { error: 'Parameters nested too deeply' } });
    const huge = { ...pushEvent(project.path_with_namespace, 'v1'), timestamp: 'x'.repeat(10_000) };
    (huge.target as any).size = 1e300;
    (huge.target as any).references = [{ mediaType: CONFIG_TYPE, size: -5, digest: 42 }];
    expect(await notify([huge, pushEvent(project.path_with_namespace, 'x'.repeat(5000))])).toEqual({ status: 200, body: 200 });
    const [repository] = (await api.get(`/projects/${project.id}/registry/repositories`)).body;
    expect((await api.get(`/projects/${project.id}/registry/repositories/${repository.id}/tags/v1`)).body).toMatchObject({ total_size: null, revision: null });
    expect(await tagNames(project.id, repository.id)).toEqual(['v1']);
  });

  it('refuses every notification while no secret is configured', async () => {
    const unconfigured = await startTestServer();
    try {
      const project = await createProject(unconfigured);
      const response = await fetch(`${unconfigured.apiUrl}/container_registry_event/events`, {
        method: 'POST',
        headers: { 'content-type': DOCKER, authorization: '' },
        body: JSON.stringify({ events: [pushEvent(project.path_with_namespace, 'v1')] }),
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ message: '401 Unauthorized' });
    } finally {
      await unconfigured.close();
    }
  });
});

// ───────────────────────────── Reading ─────────────────────────────

describe('GET /projects/:id/registry/repositories', () => {
  it('lists by id with tags when asked, sorted by name, paginated', async () => {
    const project = await createProject(api);
    const root = await repositoryWith(project, '', [{ tag: 'v2' }, { tag: 'latest' }, { tag: 'v10' }]);
    const web = await repositoryWith(project, 'web', [{ tag: 'a' }]);
    const plain = await api.get(`/projects/${project.id}/registry/repositories`);
    expect(plain.body.map((r: any) => r.id)).toEqual([root.id, web.id]);
    expect(Object.keys(plain.body[0])).toEqual(['id', 'name', 'path', 'project_id', 'location', 'created_at']);
    expect(plain.headers.get('x-total')).toBe('2');
    const withTags = await api.get(`/projects/${project.id}/registry/repositories`, { query: { tags: true, per_page: 1 } });
    expect(withTags.headers.get('x-next-page')).toBe('2');
    expect(withTags.body[0].tags).toEqual(
      ['latest', 'v10', 'v2'].map((tag) => ({ name: tag, path: `${project.path_with_namespace}:${tag}`, location: `${HOST}/${project.path_with_namespace}:${tag}` })),
    );
    expect(await api.get(`/projects/${project.id}/registry/repositories`, { query: { tags: 'maybe' } })).toMatchObject({ status: 400, body: { error: 'tags is invalid' } });
  });

  it('is off with the project’s container registry (403), and follows a project rename', async () => {
    const project = await createProject(api);
    await repositoryWith(project, '', [{ tag: 'v1' }]);
    expect((await api.put(`/projects/${project.id}`, { path: `${project.path}-renamed` })).status).toBe(200);
    expect((await api.get(`/projects/${project.id}/registry/repositories`)).body[0].path).toBe(`${project.path_with_namespace}-renamed`);
    expect((await api.put(`/projects/${project.id}`, { container_registry_enabled: false })).status).toBe(200);
    expect(await api.get(`/projects/${project.id}/registry/repositories`)).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
  });
});

describe('GET /groups/:id/registry/repositories', () => {
  it("lists the repositories of the group's and its subgroups' projects with the registry on", async () => {
    const group = await createGroup(api);
    const sub = await createGroup(api, { parent: group });
    const inGroup = await createProject(api, { group });
    const inSub = await createProject(api, { group: sub });
    const off = await createProject(api, { group });
    const elsewhere = await createProject(api);
    const a = await repositoryWith(inGroup, '', [{ tag: 'v1' }]);
    const b = await repositoryWith(inSub, 'api', [{ tag: 'v2' }]);
    await repositoryWith(off, '', [{ tag: 'v1' }]);
    await repositoryWith(elsewhere, '', [{ tag: 'v1' }]);
    expect((await api.put(`/projects/${off.id}`, { container_registry_enabled: false })).status).toBe(200);
    const res = await api.get(`/groups/${group.id}/registry/repositories`, { query: { tags: true } });
    expect(res.status).toBe(200);
    expect(res.body.map((r: any) => r.id)).toEqual([a.id, b.id]);
    expect(res.body[1].tags).toEqual([{ name: 'v2', path: `${inSub.path_with_namespace}/api:v2`, location: `${HOST}/${inSub.path_with_namespace}/api:v2` }]);
    expect((await api.get(`/groups/${sub.id}/registry/repositories`)).body.map((r: any) => r.id)).toEqual([b.id]);
  });
});

describe('tags', () => {
  it("answers 404 for an unknown tag, another project's repository, 400 for a non-integer id", async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    const repository = await repositoryWith(other, '', [{ tag: 'v1' }]);
    const mine = await repositoryWith(project, '', [{ tag: 'v1' }]);
    const base = `/projects/${project.id}/registry/repositories`;
    expect(await api.get(`${base}/${repository.id}/tags`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get(`${base}/${repository.id}/tags/v1`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get(`${base}/${mine.id}/tags/v9`)).toMatchObject({ status: 404, body: { message: '404 Tag Not Found' } });
    expect(await api.get(`${base}/abc/tags`)).toMatchObject({ status: 400, body: { error: 'repository_id is invalid' } });
    expect(await api.get(`${base}/99999999999/tags`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });

  it('DELETE …/tags/:tag_name removes the tag (200, the status as body)', async () => {
    const project = await createProject(api);
    const repository = await repositoryWith(project, '', [{ tag: 'v1' }, { tag: 'v2' }]);
    const res = await api.del(`/projects/${project.id}/registry/repositories/${repository.id}/tags/v1`);
    expect(res).toMatchObject({ status: 200, body: 200 });
    expect(await tagNames(project.id, repository.id)).toEqual(['v2']);
    expect((await api.events(`container_repository-${repository.id}`)).at(-1)).toMatchObject({ type: 'ContainerRepositoryTagDeleted', data: { tag: 'v1' } });
    expect(await api.del(`/projects/${project.id}/registry/repositories/${repository.id}/tags/v1`)).toMatchObject({ status: 404, body: { message: '404 Tag Not Found' } });
  });
});

// ───────────────────────────── Deletions ─────────────────────────────

describe('DELETE /projects/:id/registry/repositories/:repository_id', () => {
  it('answers 202 and removes the repository asynchronously', async () => {
    const project = await createProject(api);
    const repository = await repositoryWith(project, 'gone', [{ tag: 'v1' }]);
    expect(await api.del(`/projects/${project.id}/registry/repositories/${repository.id}`)).toMatchObject({ status: 202, body: 202 });
    await eventually(async () => ((await api.get(`/projects/${project.id}/registry/repositories`)).body.length === 0 ? true : undefined));
    expect(await eventTypes(repository.id)).toEqual(['ContainerRepositoryCreated', 'ContainerRepositoryTagPushed', 'ContainerRepositoryDeletionScheduled', 'ContainerRepositoryDeleted']);
    // The path is free again: the next push makes a new repository.
    const again = await repositoryWith(project, 'gone', [{ tag: 'v2' }]);
    expect(again.id).not.toBe(repository.id);
  });
});

describe('DELETE /projects/:id/registry/repositories/:repository_id/tags', () => {
  const bulk = (projectId: number, id: number, body: Record<string, unknown>) => api.request('DELETE', `/projects/${projectId}/registry/repositories/${id}/tags`, { body });

  it('schedules the deletion (202); the reactor deletes by the rules; a second request within the hour is 400', async () => {
    const project = await createProject(api);
    const ages = ['2030-03-01T01:00:00.000Z', '2030-03-01T02:00:00.000Z', '2030-03-01T03:00:00.000Z', '2030-03-01T04:00:00.000Z'];
    const repository = await repositoryWith(project, '', [...ages.map((at, i) => ({ tag: `v${i + 1}`, at })), { tag: 'latest', at: ages[0]! }]);
    // python-gitlab 3.x sends name_regex_delete.
    expect(await bulk(project.id, repository.id, { name_regex_delete: '.*', keep_n: 2 })).toMatchObject({ status: 202, body: 202 });
    await eventually(async () => ((await tagNames(project.id, repository.id)).length === 3 ? true : undefined));
    expect(await tagNames(project.id, repository.id)).toEqual(['latest', 'v3', 'v4']);
    expect(await bulk(project.id, repository.id, { name_regex: '.*' })).toEqual(expect.objectContaining({ status: 400, body: { message: CLEANUP_TOO_SOON } }));
    clock = new Date(clock.getTime() + 60 * 60 * 1000);
    expect((await bulk(project.id, repository.id, { name_regex: 'v.*', older_than: '7h' })).status).toBe(202);
    // The command clock is 11:00 now: v3 (03:00) is older than 7 hours, v4 (04:00) is not.
    await eventually(async () => ((await tagNames(project.id, repository.id)).length === 2 ? true : undefined));
    expect(await tagNames(project.id, repository.id)).toEqual(['latest', 'v4']);
  });

  it("answers Grape's parameter errors, an invalid RE2 regexp among them, and schedules nothing", async () => {
    const project = await createProject(api);
    const repository = await repositoryWith(project, '', [{ tag: 'v1' }]);
    expect(await bulk(project.id, repository.id, {})).toMatchObject({ status: 400, body: { error: 'name_regex, name_regex_delete are missing, at least one parameter must be provided' } });
    expect(await bulk(project.id, repository.id, { name_regex: '(' })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^name_regex is an invalid regexp: missing closing \)/) } });
    expect(await bulk(project.id, repository.id, { name_regex: '.*', name_regex_keep: '(?=a)' })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^name_regex_keep is an invalid regexp/) } });
    expect(await bulk(project.id, repository.id, { name_regex: '.*', keep_n: 'two' })).toMatchObject({ status: 400, body: { error: 'keep_n is invalid' } });
    expect(await eventTypes(repository.id)).toEqual(['ContainerRepositoryCreated', 'ContainerRepositoryTagPushed']);
  });
});

describe('DELETE /projects/:id/registry/repositories/:repository_id/tags: hostile patterns (issue 20, item 1)', () => {
  const bulk = (projectId: number, id: number, body: Record<string, unknown>, token?: string | null) =>
    api.request('DELETE', `/projects/${projectId}/registry/repositories/${id}/tags`, { body, ...(token === undefined ? {} : { token }) });
  const TOO_LARGE = 'is an invalid regexp: pattern too large - compile failed';

  it('compiles no pattern for a caller who may not delete: anonymous and developers on a public project are 403 whatever the pattern', async () => {
    const project = await createProject(api, { visibility: 'public' });
    const repository = await repositoryWith(project, '', [{ tag: 'v1' }]);
    const developer = await api.createUser();
    expect((await api.post(`/projects/${project.id}/members`, { user_id: developer.user.id, access_level: 30 })).status).toBe(201);
    for (const token of [null, developer.token]) {
      for (const body of [{ name_regex: '(' }, { name_regex_delete: '.*', name_regex_keep: '(?=a)' }, { name_regex_delete: 'a'.repeat(200_000) }]) {
        expect(await bulk(project.id, repository.id, body, token)).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
      }
    }
    // Parameters that cost nothing to read are still Grape's 400 first, as GitLab validates them before the endpoint.
    expect(await bulk(project.id, repository.id, { name_regex: '.*', keep_n: 'two' }, null)).toMatchObject({ status: 400, body: { error: 'keep_n is invalid' } });
    expect(await eventTypes(repository.id)).toEqual(['ContainerRepositoryCreated', 'ContainerRepositoryTagPushed']);
  });

  it("refuses a pattern too large to compile with GitLab's RE2 message, for a maintainer, and schedules nothing", async () => {
    const project = await createProject(api);
    const repository = await repositoryWith(project, '', [{ tag: 'v1' }]);
    const cases: [Record<string, unknown>, string][] = [
      [{ name_regex_delete: 'a'.repeat(REGEXP_MAX_LENGTH + 1) }, `name_regex_delete ${TOO_LARGE}`],
      [{ name_regex: 'x{1000}'.repeat(20) }, `name_regex ${TOO_LARGE}`],
      [{ name_regex_delete: '.*', name_regex_keep: '.{0,1000}'.repeat(10) }, `name_regex_keep ${TOO_LARGE}`],
      [{ name_regex_delete: '(v{1000}|w{1000}|x{1000}){9}' }, `name_regex_delete ${TOO_LARGE}`],
      [{ name_regex: `[${'a'.repeat(9_000_000)}]` }, `name_regex ${TOO_LARGE}`],
    ];
    for (const [body, error] of cases) expect(await bulk(project.id, repository.id, body)).toMatchObject({ status: 400, body: { error } });
    expect(await eventTypes(repository.id)).toEqual(['ContainerRepositoryCreated', 'ContainerRepositoryTagPushed']);
    // Below the limits, a long pattern is a pattern.
    expect(await bulk(project.id, repository.id, { name_regex_delete: `nothing-${'x'.repeat(2_000)}|v{1,5}[0-9]{0,300}` })).toMatchObject({ status: 202, body: 202 });
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'public';

// Reporters read (anyone on a public project), developers delete a tag, maintainers remove a
// repository or delete in bulk; no authenticate!: anonymous is 404 on a private project, 403 on a
// public one for writes. A private project of others is 404, never 403.
// prettier-ignore
const PROJECT_MATRIX: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/registry/repositories':                                    { private: { anonymous: 404, nonMember: 404, external: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, admin: 200, blocked: 403 }, public: { anonymous: 200, nonMember: 200, external: 200, guest: 200 } },
  'GET /projects/:id/registry/repositories/:repository_id/tags':                { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200, guest: 200 } },
  'GET /projects/:id/registry/repositories/:repository_id/tags/:tag_name':      { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200 } },
  'DELETE /projects/:id/registry/repositories/:repository_id/tags/:tag_name':   { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 403, developer: 200, maintainer: 200, admin: 200 }, public: { anonymous: 403, nonMember: 403, reporter: 403, developer: 200 } },
  'DELETE /projects/:id/registry/repositories/:repository_id':                  { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 202, admin: 202 }, public: { anonymous: 403, nonMember: 403, developer: 403, maintainer: 202 } },
  'DELETE /projects/:id/registry/repositories/:repository_id/tags':             { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 202, admin: 202 }, public: { anonymous: 403, nonMember: 403, developer: 403, maintainer: 202 } },
};

// GroupPolicy: reporters of the group (administrators as owners); a private group of others is 404.
// prettier-ignore
const GROUP_MATRIX: MatrixTable<Role, Visibility> = {
  'GET /groups/:id/registry/repositories': { private: { anonymous: 404, nonMember: 404, external: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 403, nonMember: 403, external: 403, guest: 403, reporter: 200 } },
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, ProjectFixture>();
  const groups = new Map<Visibility, number>();
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      projects.set(visibility, (await api.get(`/projects/${id}`)).body);
      const groupId = await sourceWithRoles(api, callers, 'groups', visibility);
      groups.set(visibility, groupId);
    }
  });

  describe('projects', () => {
    let n = 0;
    permissionMatrix(PROJECT_MATRIX, async ({ endpoint, caller, visibility }) => {
      const [method, path] = endpoint.split(' ') as [string, string];
      const project = projects.get(visibility)!;
      // Every call gets a repository of its own, pushed by the registry.
      const repository = await repositoryWith(project, `m${++n}`, [{ tag: 'v1' }]);
      const url = path.replace(':id', String(project.id)).replace(':repository_id', String(repository.id)).replace(':tag_name', 'v1');
      const body = path.endsWith('/tags') && method === 'DELETE' ? { name_regex: '.*' } : undefined;
      const res = await api.request(method, url, { token: callers[caller].token, ...(body ? { body } : {}) });
      if (res.status === 404) expect(res.body).toEqual({ message: '404 Project Not Found' });
      return res.status;
    });
  });

  describe('groups', () => {
    permissionMatrix(GROUP_MATRIX, async ({ endpoint, caller, visibility }) => {
      const url = endpoint.split(' ')[1]!.replace(':id', String(groups.get(visibility)));
      const res = await api.get(url, { token: callers[caller].token });
      if (res.status === 404) expect(res.body).toEqual({ message: '404 Group Not Found' });
      return res.status;
    });
  });
});
