import { type Context, Hono } from 'hono';
import { sql } from 'kysely';
import { regexpError } from '../../domain/container-repositories/cleanup.js';
import { forbidden, notFound, recordNotFound } from '../../domain/errors.js';
import {
  type ContainerRepositoryRow,
  findProjectRepository,
  findTag,
  groupRepositoriesQuery,
  projectRepositoriesQuery,
  repositoryTagsQuery,
  tagsOf,
} from '../../projections/container-repositories/queries.js';
import { toRepository, toTag, toTagDetails } from '../entities/container-repositories.js';
import { authenticate, writerFor } from '../kernel/auth.js';
import { appContext, type AppEnv, type Auth } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { paginate } from '../kernel/pagination.js';
import { declaration, optional, rawParams, t, withDefault, type RawParams, declared } from '../kernel/params.js';
import { pathNamed, pathRow, userGroup, userProject, type ProjectScope } from '../kernel/scope.js';
import { run } from '../../commands/kernel/run.js';
import { containerRepositories } from '../../domain/container-repositories/aggregate.js';

/**
 * GitLab's API::ProjectContainerRepositories and API::GroupContainerRepositories (12.x):
 * reporters (and anyone on a public project) read, developers delete a tag, maintainers
 * remove a repository or delete tags in bulk. No `authenticate!`: the project's visibility
 * decides, as `authorize! :read_container_image, user_project` does first for every route.
 */

const listShape = { tags: withDefault(t.boolean(), false) };
/**
 * The untrusted_regexp validator: RE2 must compile each pattern ("<param> is an invalid regexp:
 * <RE2's error>", every failure together). Compiling costs in proportion to the pattern, so it
 * runs once the repository is found and the caller may delete from it, where GitLab validates
 * with the other parameters: no one else makes the server compile anything.
 */
function untrustedRegexps(raw: RawParams, names: readonly string[]) {
  const p = declaration(raw);
  for (const name of names) {
    const value = raw[name];
    const error = typeof value === 'string' ? regexpError(value) : undefined;
    if (error !== undefined) p.check(`${name} is an invalid regexp: ${error}`);
  }
  p.done();
}
const bulkShape = {
  name_regex_delete: optional(t.string()),
  name_regex: optional(t.string()),
  name_regex_keep: optional(t.string()),
  keep_n: optional(t.integer()),
  older_than: optional(t.string()),
};

/** The project, readable and its container images readable by the caller (the routes' `before`). */
async function registryProject(c: Context): Promise<{ auth: Auth; project: ProjectScope }> {
  const auth = await authenticate(c);
  return { auth, project: await userProject(c, auth, 'read_container_image') };
}

/** `requires :repository_id, type: Integer`. */
const ON_REPOSITORY = { pathIds: ['repository_id'] } as const;

/** `user_project.container_repositories.find(params[:repository_id])`: "404 Not found". */
const repositoryOf = (c: Context, project: ProjectScope): Promise<ContainerRepositoryRow> =>
  pathRow(c, 'repository_id', (db, id) => findProjectRepository(db, project.row.id, id), () => recordNotFound('ContainerRepository'));

/** `authorize! ability, repository` (ContainerRepositoryPolicy delegates to the project). */
function authorize(project: ProjectScope, ability: 'read_container_image' | 'destroy_container_image' | 'admin_container_image') {
  if (!project.can(ability)) throw forbidden();
}

/** `validate_tag!`: a tag the registry does not list is "404 Tag Not Found". */
const tagOf = (c: Context, repository: ContainerRepositoryRow) => pathNamed(c, 'tag_name', (db, name) => findTag(db, repository.id, name), () => notFound('Tag'));

/** Grape's `status :ok` / `status :accepted` as an endpoint's last value: the status is the body. */
const statusBody = (c: Context, status: 200 | 202) => c.json(status, status);

async function presentRepositories(c: Context, rows: readonly ContainerRepositoryRow[], withTags: boolean) {
  const { db, config } = appContext(c);
  if (!withTags) return rows.map((row) => toRepository(config.registryHost, row));
  const tags = await tagsOf(db, rows.map((row) => row.id));
  return rows.map((row) => toRepository(config.registryHost, row, tags.filter((tag) => tag.repository_id === row.id)));
}

/** The answer of a deletion: the status code itself (`status :accepted` and a body of 202). */
const STATUS = { type: 'integer', description: 'The status code itself.' } as const;

export const containerRepositoryRoutes = new Hono<AppEnv>()
  .get('/projects/:id/registry/repositories', documented({ summary: "List a project's container registry repositories", params: listShape, auth: 'optional', responses: { 200: 'ContainerRepository[]', ...REFUSED } }), async (c) => {
    const { project } = await registryProject(c);
    const p = declaration(await rawParams(c));
    const { tags } = p.parse(listShape);
    p.done();
    const rows = await paginate(c, projectRepositoriesQuery(appContext(c).db, project.row.id), (q) => q.orderBy('r.id'));
    return c.json(await presentRepositories(c, rows, tags));
  })

  .delete('/projects/:id/registry/repositories/:repository_id', documented({ summary: 'Schedule a container registry repository for deletion', ...ON_REPOSITORY, responses: { 202: STATUS, ...REFUSED } }), async (c) => {
    const { auth, project } = await registryProject(c);
    const w = writerFor(c, auth);
    await declared(c, {}, ON_REPOSITORY);
    const repository = await repositoryOf(c, project);
    authorize(project, 'admin_container_image');
    await run(w, containerRepositories, repository.id, { type: 'ScheduleDeletion' });
    return statusBody(c, 202);
  })

  .get('/projects/:id/registry/repositories/:repository_id/tags', documented({ summary: "List a container registry repository's tags", ...ON_REPOSITORY, auth: 'optional', responses: { 200: 'ContainerRepositoryTag[]', ...REFUSED } }), async (c) => {
    const { project } = await registryProject(c);
    await declared(c, {}, ON_REPOSITORY);
    const repository = await repositoryOf(c, project);
    authorize(project, 'read_container_image');
    const { db, config } = appContext(c);
    const rows = await paginate(c, repositoryTagsQuery(db, repository.id), (q) => q.orderBy(sql`name collate "C"`));
    return c.json(rows.map((tag) => toTag(config.registryHost, repository, tag)));
  })

  .delete('/projects/:id/registry/repositories/:repository_id/tags', documented({ summary: 'Schedule the deletion of the tags matching a pattern', params: bulkShape, ...ON_REPOSITORY, responses: { 202: STATUS, ...REFUSED } }), async (c) => {
    const { auth, project } = await registryProject(c);
    const w = writerFor(c, auth);
    const { name_regex_delete, name_regex, name_regex_keep, keep_n, older_than } = await declared(c, bulkShape, { ...ON_REPOSITORY, rules: { atLeastOneOf: [['name_regex', 'name_regex_delete']] } });
    const repository = await repositoryOf(c, project);
    authorize(project, 'admin_container_image');
    untrustedRegexps(await rawParams(c), ['name_regex_delete', 'name_regex', 'name_regex_keep']);
    const rules = {
      // CleanupTagsService: `params['name_regex_delete'] || params['name_regex']`.
      nameRegexDelete: (name_regex_delete ?? name_regex)!,
      nameRegexKeep: name_regex_keep ?? null,
      keepN: keep_n ?? null,
      olderThan: older_than ?? null,
    };
    await run(w, containerRepositories, repository.id, { type: 'ScheduleCleanup', rules, at: w.ctx.now().toISOString() });
    return statusBody(c, 202);
  })

  .get('/projects/:id/registry/repositories/:repository_id/tags/:tag_name', documented({ summary: 'Get a container registry tag', ...ON_REPOSITORY, auth: 'optional', responses: { 200: 'ContainerRepositoryTagDetails', ...REFUSED } }), async (c) => {
    const { project } = await registryProject(c);
    await declared(c, {}, ON_REPOSITORY);
    const repository = await repositoryOf(c, project);
    authorize(project, 'read_container_image');
    return c.json(toTagDetails(appContext(c).config.registryHost, repository, await tagOf(c, repository)));
  })

  .delete('/projects/:id/registry/repositories/:repository_id/tags/:tag_name', documented({ summary: 'Delete a container registry tag', ...ON_REPOSITORY, responses: { 200: STATUS, ...REFUSED } }), async (c) => {
    const { auth, project } = await registryProject(c);
    const w = writerFor(c, auth);
    await declared(c, {}, ON_REPOSITORY);
    const repository = await repositoryOf(c, project);
    authorize(project, 'destroy_container_image');
    const tag = await tagOf(c, repository);
    await run(w, containerRepositories, repository.id, { type: 'DeleteTag', tag: tag.name });
    return statusBody(c, 200);
  })

  .get('/groups/:id/registry/repositories', documented({ summary: "List a group's container registry repositories", params: listShape, auth: 'optional', responses: { 200: 'ContainerRepository[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const group = await userGroup(c, auth, 'read_container_image');
    const p = declaration(await rawParams(c));
    const { tags } = p.parse(listShape);
    p.done();
    const rows = await paginate(c, groupRepositoriesQuery(appContext(c).db, group.row.id), (q) => q.orderBy('r.id'));
    return c.json(await presentRepositories(c, rows, tags));
  });
