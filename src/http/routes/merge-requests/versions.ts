import { Hono, type Context } from 'hono';
import { perDatabase } from '../../../database/after-commit.js';
import type { Db } from '../../../database/database.js';
import { WeightedLruMap } from '../../../lru.js';
import { DomainError, recordNotFound } from '../../../domain/errors.js';
import { VERSION_DIFF_LIMITS } from '../../../domain/repository/diffs.js';
import { latestVersionFilesQuery, versionCommitRowsQuery, versionFilesQuery, versionOfIidQuery } from '../../../projections/merge-requests/queries.js';
import type { MergeRequestVersionRow } from '../../../projections/merge-requests/tables.js';
import { type CommitView, collectDiffs, commitsIn, findCommits } from '../../../projections/repository/queries.js';
import { toMergeRequestDiff, toVersionCommit } from '../../entities/merge-request-versions.js';
import { projectWebUrl } from '../../entities/projects.js';
import { toDiff } from '../../entities/repository-diffs.js';
import { authenticate } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { jsonWithMembers } from '../../kernel/json.js';
import { type Page, pageOf, setPaginationHeaders } from '../../kernel/pagination.js';
import { declaration, integerCheck, pathId, rawParams } from '../../kernel/params.js';
import { type ProjectScope, userProject } from '../../kernel/scope.js';
import { mergeRequestOf, mergeRequestWith, presentMergeRequest } from './find.js';

/**
 * A merge request's diff versions, commits and changes, GitLab 12.x: API::MergeRequestDiffs
 * (`versions`, `versions/:version_id`) and API::MergeRequests' `commits` and `changes`. All
 * read `find_merge_request_with_access` (read_merge_request). A version is what
 * MergeRequestDiff stored: its commits (the source's not in the target, newest first) and
 * its diff from the merge base to the source head, stored when the version was taken.
 */

/** Grape's order: the path integers, then `use :pagination`; every failure in one 400. */
async function parsePath(c: Context, names: readonly string[], paginated: boolean): Promise<Page | undefined> {
  const p = declaration(await rawParams(c));
  for (const name of names) p.check(integerCheck(c, name));
  let page: Page | undefined;
  if (paginated) {
    try {
      page = await pageOf(c);
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'invalid_params') throw error;
      for (const message of error.params ?? []) p.check(message);
    }
  }
  p.done();
  return page;
}

/** The commits of a version, newest first; a commit gone from the repository is left out. */
const versionCommits = (db: Db, projectId: number, version: Pick<MergeRequestVersionRow, 'commit_shas'>): Promise<CommitView[]> =>
  findCommits(db, projectId, version.commit_shas);

/**
 * MergeRequestDiff#raw_diffs(limits: false) as the JSON of Entities::Diff: the files the
 * version stored when it was taken (the merge base → head diff collected with
 * Commit.max_diff_options; versionFilesQuery's row, its text as stored). A version taken before
 * forgelog stored them has its diff computed from the repository, as it was then.
 */
async function versionDiffsJson(db: Db, projectId: number, version: Pick<MergeRequestVersionRow, 'base_commit_sha' | 'head_commit_sha'>, stored: readonly { files_json: string }[]): Promise<string> {
  if (stored[0]) return stored[0].files_json;
  return JSON.stringify((await collectDiffs(db, projectId, version.base_commit_sha, version.head_commit_sha, VERSION_DIFF_LIMITS)).diffs.map(toDiff));
}

const webUrlOf = (c: Context, project: ProjectScope) => projectWebUrl(appContext(c).config, project.row.path_with_namespace);

/**
 * Versions' `commits` as Entities::MergeRequestDiffFull renders them (JSON text), per version
 * and project URL: a version's commits never change (its SHAs, and the objects they name), so a
 * version read before sends no commit query and parses and renders none — a third of the
 * CPU of a version of 30 commits. The URL is in the key: a moved project's commits name its new
 * path. Bounded by the text's length, per database (perDatabase).
 */
const RENDERED_COMMITS_LENGTH = 8 * 1024 * 1024;
const renderedCommits = perDatabase(() => new WeightedLruMap<string, string>(RENDERED_COMMITS_LENGTH));

const ON_MERGE_REQUEST = { pathIds: ['merge_request_iid'] } as const;
const ON_VERSION = { pathIds: ['merge_request_iid', 'version_id'] } as const;

// API::MergeRequests: `before { authenticate_non_get! }` — a public project's merge requests are anyone's to read.
export const mergeRequestVersionRoutes = new Hono<AppEnv>()
  .get('/projects/:id/merge_requests/:merge_request_iid/versions', documented({ summary: 'Get a list of merge request diff versions', ...ON_MERGE_REQUEST, auth: 'optional', responses: { 200: 'MergeRequestDiff[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const page = (await parsePath(c, ['merge_request_iid'], true))!;
    const project = await userProject(c, auth);
    const mergeRequest = await mergeRequestOf(c, project, 'read_merge_request');
    const { db } = appContext(c);
    const query = db.selectFrom('merge_request_versions').where('merge_request_id', '=', mergeRequest.id);
    const [rows, counted] = await Promise.all([
      query.selectAll().orderBy('id', 'desc').limit(page.perPage).offset(page.offset).execute(),
      query.select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirst(),
    ]);
    setPaginationHeaders(c, page, Number(counted?.count ?? 0));
    return c.json(rows.map(toMergeRequestDiff));
  })

  .get('/projects/:id/merge_requests/:merge_request_iid/versions/:version_id', documented({ summary: 'Get a single merge request diff version', ...ON_VERSION, auth: 'optional', responses: { 200: 'MergeRequestDiffFull', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    await parsePath(c, ['merge_request_iid', 'version_id'], false);
    const project = await userProject(c, auth);
    const projectId = project.row.id;
    const versionId = pathId(c, 'version_id');
    if (versionId === null) {
      await mergeRequestOf(c, project, 'read_merge_request');
      throw recordNotFound('Merge Request Diff');
    }
    const { db } = appContext(c);
    const webUrl = webUrlOf(c, project);
    const rendered = renderedCommits.of(db);
    const renderedKey = `${versionId} ${webUrl}`;
    const known = rendered.get(renderedKey);
    // The merge request, the version, its files and (unless rendered before) its commits in one round trip.
    const [, [version], files, commitRows] = await mergeRequestWith(c, project, 'read_merge_request', (db, iid) => [
      versionOfIidQuery(db, projectId, iid, versionId),
      versionFilesQuery(db, versionId),
      known === undefined ? versionCommitRowsQuery(db, projectId, versionId) : null,
    ]);
    if (!version) throw recordNotFound('Merge Request Diff');
    let commits = known;
    if (commits === undefined) {
      commits = JSON.stringify(commitsIn(version.commit_shas, commitRows).map((commit) => toVersionCommit(commit, webUrl)));
      rendered.set(renderedKey, commits, commits.length);
    }
    const diffs = await versionDiffsJson(db, projectId, version, files);
    return jsonWithMembers(c, toMergeRequestDiff(version), [['commits', commits], ['diffs', diffs]]);
  })

  .get('/projects/:id/merge_requests/:merge_request_iid/commits', documented({ summary: 'Get the commits of a merge request', ...ON_MERGE_REQUEST, auth: 'optional', responses: { 200: 'Commit[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const page = (await parsePath(c, ['merge_request_iid'], true))!;
    const project = await userProject(c, auth);
    // `Kaminari.paginate_array(merge_request.commits)`: the latest version's commits, newest first.
    const [mergeRequest, [version]] = await mergeRequestWith(c, project, 'read_merge_request', (db, iid) => [versionOfIidQuery(db, project.row.id, iid)]);
    if (!version) throw new Error(`merge request ${mergeRequest.id} has no version ${mergeRequest.latest_version_id}`);
    const { db } = appContext(c);
    const shas = version.commit_shas.slice(page.offset, page.offset + page.perPage);
    const commits = await versionCommits(db, project.row.id, { ...version, commit_shas: shas });
    setPaginationHeaders(c, page, version.commit_shas.length);
    const webUrl = webUrlOf(c, project);
    return c.json(commits.map((commit) => toVersionCommit(commit, webUrl)));
  })

  .get('/projects/:id/merge_requests/:merge_request_iid/changes', documented({ summary: 'Show the merge request changes', ...ON_MERGE_REQUEST, auth: 'optional', responses: { 200: 'MergeRequestChanges', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    await parsePath(c, ['merge_request_iid'], false);
    const project = await userProject(c, auth);
    const [mergeRequest, files] = await mergeRequestWith(c, project, 'read_merge_request', (db, iid) => [latestVersionFilesQuery(db, project.row.id, iid)]);
    // Entities::MergeRequestChanges (12.x): the single merge request and `changes`, the latest
    // version's raw_diffs(limits: false). (`overflow` and `access_raw_diffs` are 13.6's.)
    const version = { base_commit_sha: mergeRequest.base_sha, head_commit_sha: mergeRequest.head_sha };
    const [body, diffs] = await Promise.all([presentMergeRequest(c, project, mergeRequest), versionDiffsJson(appContext(c).db, project.row.id, version, files)]);
    return jsonWithMembers(c, body, [['changes', diffs]]);
  });
