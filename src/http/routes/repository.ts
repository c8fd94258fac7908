import { Hono, type Context } from 'hono';
import { sql } from 'kysely';
import { commitFiles, committerOf, createBranch, deleteBranch, pickOnto } from '../../commands/repository.js';
import { DomainError, forbidden, notFound, paramErrors, serviceError } from '../../domain/errors.js';
import { ACTIONS, isTraversal, type FileAction } from '../../domain/repository/files.js';
import { MODES } from '../../domain/repository/objects.js';
import { developersCan, matchingRefs } from '../../domain/repository/push-access.js';
import {
  commitLog,
  commitLogPage,
  commitStats,
  commitsStats,
  type CommitView,
  BRANCH_NAME_ORDER,
  branchesOf,
  entryAt,
  findBranch,
  findCommit,
  findCommits,
  findObject,
  lastCommitFor,
  listBranches,
  type LogFilters,
  readTree,
  namedCommit,
  resolveCommit,
} from '../../projections/repository/queries.js';
import { projectWebUrl } from '../entities/projects.js';
import { toBlameRange, toBranch, toCommit, toCommitDetail, toFile, toTreeObject } from '../entities/repository.js';
import { blame } from '../../projections/repository/blame.js';
import { toMergeRequestBasic } from '../entities/merge-requests.js';
import { mergeRequestViews } from '../../projections/merge-requests/queries.js';
import { authenticate, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { pageOf, paginate, paginateArray, setPaginationHeaders } from '../kernel/pagination.js';
import { declaration, optional, params, rawParams, required, t, withDefault, type Shape } from '../kernel/params.js';
import { documented, RAW_TEXT, REFUSED } from '../kernel/documented.js';
import { userProject, type ProjectScope } from '../kernel/scope.js';
import { mergeBase, reachableAmong, tipsContaining } from '../../projections/repository/history.js';
import { branchAccess, collaboratingWriter, refWriter } from './repository-access.js';

/**
 * GitLab's repository API (12.x): API::Commits, API::Branches, API::Repositories' tree and
 * API::Files, over the event-sourced repository (src/domain/repository/). Reads ask
 * download_code (reporters, or anyone who sees a public or internal project); writes push_code
 * and the branch's protection.
 */

/** Repository#contributors reads this many commits of the default branch (merges skipped). */
const CONTRIBUTOR_COMMITS = 2000;

const webUrlOf = (c: Context, project: ProjectScope) => projectWebUrl(appContext(c).config, project.row.path_with_namespace);

/** The page of an array, with GitLab's headers (Kaminari.paginate_array). */
/**
 * A page of the log of `heads` with GitLab 12's headers (`Kaminari.paginate_array(commits,
 * total_count: …)`: X-Total is the log's length, `commit_count_for_ref` or `count_commits`).
 */
async function logPage(c: Context, projectId: number, heads: readonly CommitView[], filters: LogFilters): Promise<CommitView[]> {
  const page = await pageOf(c);
  const { commits, total } = heads.length === 0 ? { commits: [], total: 0 } : await commitLogPage(appContext(c).db, projectId, heads, filters, { offset: page.offset, limit: page.perPage });
  setPaginationHeaders(c, page, total);
  return commits;
}

/**
 * Repository#merged_to_root_ref? of each branch: its head an ancestor of the default branch's
 * head, and not that head itself. One walk of the commit graph index for all of them, down
 * to the lowest generation among their heads.
 */
async function mergedInto(c: Context, project: ProjectScope, branches: readonly { name: string; sha: string }[]) {
  const { db } = appContext(c);
  // `commit(root_ref).sha`: the default branch's name as rev-parse resolves it (a tag of that name first).
  const root = project.row.default_branch ? await namedCommit(db, project.row.id, project.row.default_branch) : undefined;
  const candidates = branches.filter((branch) => branch.name !== project.row.default_branch && branch.sha !== root).map((branch) => branch.sha);
  const reachable = root === undefined || candidates.length === 0 ? new Set<string>() : await reachableAmong(db, project.row.id, root, candidates);
  return (name: string, sha: string) => root !== undefined && name !== project.row.default_branch && sha !== root && reachable.has(sha);
}

async function presentBranches(c: Context, project: ProjectScope, branches: readonly { name: string; sha: string }[]) {
  const { db } = appContext(c);
  // Side by side: the reads of each go out together with the others' (the pipeline), not one after another.
  const [{ refs, may }, merged, found] = await Promise.all([branchAccess(c, project), mergedInto(c, project, branches), findCommits(db, project.row.id, branches.map((branch) => branch.sha))]);
  const webUrl = webUrlOf(c, project);
  const commits = new Map(found.map((commit) => [commit.sha, commit]));
  const out = [];
  for (const branch of branches) {
    const commit = commits.get(branch.sha)!;
    out.push(
      toBranch(branch.name, commit, webUrl, {
        merged: merged(branch.name, branch.sha),
        protected: matchingRefs(refs, branch.name).length > 0,
        developersCanPush: developersCan('push', branch.name, refs),
        developersCanMerge: developersCan('merge', branch.name, refs),
        canPush: may('push', branch.name),
        default: project.row.default_branch === branch.name,
      }),
    );
  }
  return out;
}

/** find_branch!: `{"message":"404 Branch Not Found"}`. */
async function branchOf(c: Context, project: ProjectScope) {
  const branch = await findBranch(appContext(c).db, project.row.id, c.req.param('branch') ?? '');
  if (!branch) throw notFound('Branch');
  return branch;
}

async function commitOf(c: Context, project: ProjectScope, ref: string) {
  const commit = await resolveCommit(appContext(c).db, project.row.id, ref);
  if (!commit) throw notFound('Commit');
  return commit;
}

// ───────────────────────────── POST commits: the actions ─────────────────────────────

const actionShape = {
  action: required(t.values(ACTIONS)),
  file_path: required(t.string()),
  previous_path: optional(t.string()),
  content: optional(t.string()),
  encoding: withDefault(t.values(['text', 'base64']), 'text'),
  last_commit_id: optional(t.string()),
  execute_filemode: optional(t.boolean()),
} satisfies Shape;

/** `requires :actions, type: Array[JSON]` with each action's declaration; Grape names a nested failure `actions[i][name]`. */
function parseActions(raw: unknown): FileAction[] {
  if (raw === undefined || raw === null) throw paramErrors(['actions is missing']);
  const list = Array.isArray(raw) ? raw : typeof raw === 'object' ? Object.values(raw as Record<string, unknown>) : null;
  if (list === null || list.some((item) => item === null || typeof item !== 'object' || Array.isArray(item))) throw paramErrors(['actions is invalid']);
  const errors: string[] = [];
  const actions: FileAction[] = [];
  list.forEach((item, index) => {
    const p = declaration(item as Record<string, unknown>);
    const parsed = p.parse(actionShape);
    try {
      p.done();
    } catch (error) {
      if (error instanceof DomainError) errors.push(...(error.params ?? []).map((m) => `actions[${index}][${m.split(' ')[0]}]${m.slice(m.indexOf(' '))}`));
      return;
    }
    let content: Uint8Array | undefined;
    if (parsed.content !== undefined) content = parsed.encoding === 'base64' ? Buffer.from(parsed.content, 'base64') : Buffer.from(parsed.content, 'utf8');
    actions.push({ action: parsed.action, filePath: parsed.file_path, previousPath: parsed.previous_path, content, executeFilemode: parsed.execute_filemode });
  });
  if (errors.length > 0) throw paramErrors(errors);
  return actions;
}

const createCommitShape = {
  branch: required(t.string()),
  commit_message: required(t.string()),
  start_branch: optional(t.string()),
  author_email: optional(t.string()),
  author_name: optional(t.string()),
  stats: withDefault(t.boolean(), true),
} satisfies Shape;

/**
 * What POST commits documents: its own parameters and `actions`, an array of hashes each
 * parsed with actionShape (not checked by the declaration check: parsed from the array's items).
 */
const createCommitDoc = { ...createCommitShape, actions: required(t.array(t.hash())) } satisfies Shape;

const commitsShape = {
  ref_name: optional(t.string()),
  since: optional(t.datetime()),
  until: optional(t.datetime()),
  path: optional(t.string()),
  all: optional(t.boolean()),
  with_stats: optional(t.boolean()),
  /** `git log --first-parent`: only the first parent of merges is followed (GitLab 12.10's `first_parent`). */
  first_parent: optional(t.boolean()),
} satisfies Shape;
const commitShape = { stats: withDefault(t.boolean(), true) } satisfies Shape;
const refsShape = { type: withDefault(t.values(['branch', 'tag', 'all']), 'all') } satisfies Shape;
const branchesShape = { search: optional(t.string()) } satisfies Shape;
const createBranchShape = { branch: required(t.string()), ref: required(t.string()) } satisfies Shape;
const mergeBaseShape = { refs: required(t.array(t.string())) } satisfies Shape;
/** lib/api/repositories.rb (12.x): order_by defaults to commits, sort to asc. */
const contributorsShape = { order_by: withDefault(t.values(['email', 'name', 'commits']), 'commits'), sort: withDefault(t.values(['asc', 'desc']), 'asc') } satisfies Shape;
const treeShape = { path: optional(t.string()), ref: optional(t.string()), recursive: withDefault(t.boolean(), false) } satisfies Shape;
const pickShape = { branch: required(t.string(), { notBlank: true }) } satisfies Shape;
const fileShape = { ref: required(t.string()) } satisfies Shape;

/** API::Files' simple_file_params (DELETE), after `requires :file_path, file_path: true`. */
const simpleFileShape = {
  branch: required(t.string(), { notBlank: true }),
  commit_message: required(t.string(), { notBlank: true }),
  start_branch: optional(t.string()),
  author_email: optional(t.string()),
  author_name: optional(t.string()),
} satisfies Shape;

/** extended_file_params (POST, PUT): GitLab 12 knows only `base64` as an encoding; text is the default. */
const extendedFileShape = {
  ...simpleFileShape,
  content: required(t.string()),
  encoding: optional(t.values(['base64'])),
  last_commit_id: optional(t.string()),
} satisfies Shape;

/** Entities::Blob's answer of GET blobs/:sha. */
const BLOB = {
  type: 'object',
  properties: { size: { type: 'integer' }, encoding: { type: 'string' }, content: { type: 'string' }, sha: { type: 'string' } },
  required: ['size', 'encoding', 'content', 'sha'],
} as const;
/** What API::Files' writes answer. */
const FILE_WRITTEN = { type: 'object', properties: { file_path: { type: 'string' }, branch: { type: 'string' } }, required: ['file_path', 'branch'] } as const;
const READ = { auth: 'optional', responses: REFUSED } as const;

export const repositoryRoutes = new Hono<AppEnv>()
  // ─────────────── Commits ───────────────
  .get('/projects/:id/repository/commits', documented({ summary: 'Get a project repository commits', params: commitsShape, ...READ, responses: { 200: 'CommitWithStats[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, commitsShape);
    const project = await userProject(c, auth, 'download_code');
    const { db } = appContext(c);
    const toSeconds = (d: Date | undefined) => (d === undefined ? undefined : Math.floor(d.getTime() / 1000));
    const filters = { path: p.path, after: toSeconds(p.since), before: toSeconds(p.until), firstParent: p.first_parent };
    const webUrl = webUrlOf(c, project);
    // Entities::CommitWithStats with `with_stats=true`: each commit's stats as the single view shows them.
    const present = async (log: CommitView[]) => {
      const stats = p.with_stats ? await commitsStats(db, project.row.id, log.map((commit) => commit.sha)) : undefined;
      return log.map((commit) => {
        const s = stats?.get(commit.sha);
        return s ? { ...toCommit(commit, webUrl), stats: { additions: s.additions, deletions: s.deletions, total: s.additions + s.deletions } } : toCommit(commit, webUrl);
      });
    };
    if (p.all) {
      // `all`: every ref's history, ref_name ignored. GitLab: Gitaly's FindCommits runs `git log --all --reverse`
      // with --skip and --max-count, so each page holds the newest commits left, oldest first.
      // --all walks from HEAD, then the branches in name order.
      const branches = (await listBranches(db, project.row.id)).sort((a, b) => Number(b.name === project.row.default_branch) - Number(a.name === project.row.default_branch));
      const heads = await findCommits(db, project.row.id, branches.map((branch) => branch.sha));
      const log = await logPage(c, project.row.id, heads, filters);
      return c.json(await present(log.reverse()));
    }
    const head = await resolveCommit(db, project.row.id, p.ref_name ?? project.row.default_branch ?? 'master');
    // GitLab 12 answers an unknown ref with an empty list.
    return c.json(await present(await logPage(c, project.row.id, head ? [head] : [], filters)));
  })

  .post('/projects/:id/repository/commits', documented({ summary: 'Commit multiple file changes as one commit', params: createCommitDoc, responses: { 201: 'CommitDetail', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const raw = await rawParams(c);
    const p = declaration(raw);
    const parsed = p.parse(createCommitShape);
    let actions: FileAction[] = [];
    try {
      actions = parseActions(raw.actions);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      for (const message of error.params ?? []) p.check(message);
    }
    p.done();
    // API::Commits: download_code, then authorize_push_to_branch! (push_code, or a branch a merge request lets the caller push to).
    const project = await userProject(c, w.auth, 'download_code');
    const { db } = appContext(c);
    // authorize_push_to_branch!: the branch's protection (a new branch is protected by a matching wildcard too).
    const { may } = await branchAccess(c, project);
    if (!may('push', parsed.branch)) throw forbidden('You are not allowed to push into this branch');
    const committer = await committerOf(db, w.auth.user.id);
    // Gitlab::Git::Repository#multi_action: the author given (both fields), else the committer.
    const author = parsed.author_email !== undefined && parsed.author_name !== undefined ? { name: parsed.author_name, email: parsed.author_email } : committer;
    const sha = await commitFiles(
      w,
      {
        projectId: project.row.id,
        branch: parsed.branch,
        startBranch: parsed.start_branch ?? parsed.branch,
        message: parsed.commit_message,
        actions,
        author,
        committer,
        writer: (await collaboratingWriter(c, project))!,
      },
    );
    const commit = (await findCommit(db, project.row.id, sha))!;
    const stats = parsed.stats ? await commitStats(db, project.row.id, commit) : null;
    return c.json(toCommitDetail(commit, webUrlOf(c, project), project.row.id, stats), 201);
  })

  .get('/projects/:id/repository/commits/:sha', documented({ summary: 'Get a specific commit of a project', params: commitShape, ...READ, responses: { 200: 'CommitDetail', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, commitShape);
    const project = await userProject(c, auth, 'download_code');
    const commit = await commitOf(c, project, c.req.param('sha'));
    const stats = p.stats ? await commitStats(appContext(c).db, project.row.id, commit) : null;
    return c.json(toCommitDetail(commit, webUrlOf(c, project), project.row.id, stats));
  })

  // GitLab: the branches (and tags: none are kept yet) whose history holds the commit, by name.
  .get('/projects/:id/repository/commits/:sha/refs', documented({ summary: 'Get all references a commit is pushed to', params: refsShape, ...READ, responses: { 200: 'BasicRef[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, refsShape);
    const project = await userProject(c, auth, 'download_code');
    const commit = await commitOf(c, project, c.req.param('sha'));
    const { db } = appContext(c);
    const branches = p.type === 'tag' ? [] : await tipsContaining(db, project.row.id, commit.sha, await listBranches(db, project.row.id));
    const refs = branches.map((branch) => ({ type: 'branch', name: branch.name })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return c.json(await paginateArray(c, refs));
  })

  .post('/projects/:id/repository/commits/:sha/cherry_pick', documented({ summary: 'Cherry pick commit into a branch', params: pickShape, responses: { 201: 'Commit', ...REFUSED } }), (c) => pick(c, 'cherry_pick'))
  .post('/projects/:id/repository/commits/:sha/revert', documented({ summary: 'Revert a commit in a branch', params: pickShape, responses: { 201: 'Commit', ...REFUSED } }), (c) => pick(c, 'revert'))

  // MergeRequestsFinder's commit_sha: the project's merge requests whose latest version holds the commit, newest first.
  .get('/projects/:id/repository/commits/:sha/merge_requests', documented({ summary: 'Get Merge Requests associated with a commit', ...READ, responses: { 200: 'MergeRequestBasic[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const project = await userProject(c, auth, 'read_merge_request');
    const commit = await commitOf(c, project, c.req.param('sha'));
    const { db, config } = appContext(c);
    // The versions holding the commit by their index (migration 0056), then the merge requests whose latest they are.
    const query = db
      .selectFrom('merge_request_versions as v')
      .innerJoin('merge_requests', (join) => join.onRef('merge_requests.id', '=', 'v.merge_request_id').onRef('merge_requests.latest_version_id', '=', 'v.id'))
      .selectAll('merge_requests')
      .where(sql<boolean>`v.commit_shas @> array[${commit.sha}]::text[]`)
      .where('merge_requests.project_id', '=', project.row.id);
    const rows = await paginate(c, query, (q) => q.orderBy('merge_requests.created_at', 'desc').orderBy('merge_requests.id', 'desc'));
    const views = await mergeRequestViews(db, rows, new Map([[project.row.id, project.row.path_with_namespace]]));
    return c.json(views.map((view) => toMergeRequestBasic(view, config)));
  })

  // ─────────────── Branches ───────────────
  .get('/projects/:id/repository/branches', documented({ summary: 'Get a project repository branches', params: branchesShape, ...READ, responses: { 200: 'Branch[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, branchesShape);
    const project = await userProject(c, auth, 'download_code');
    const branches = await paginate(c, branchesOf(appContext(c).db, project.row.id, p.search), (q) => q.orderBy(BRANCH_NAME_ORDER));
    return c.json(await presentBranches(c, project, branches));
  })

  .get('/projects/:id/repository/branches/:branch', documented({ summary: 'Get a single branch', ...READ, responses: { 200: 'Branch', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const project = await userProject(c, auth, 'download_code');
    const branch = await branchOf(c, project);
    return c.json((await presentBranches(c, project, [branch]))[0]);
  })

  .post('/projects/:id/repository/branches', documented({ summary: 'Create branch', params: createBranchShape, responses: { 201: 'Branch', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const p = await params(c, createBranchShape);
    const project = await userProject(c, w.auth, 'push_code');
    const sha = await createBranch(w, { projectId: project.row.id, branch: p.branch, ref: p.ref, writer: refWriter(c, project)! });
    return c.json((await presentBranches(c, project, [{ name: p.branch, sha }]))[0], 201);
  })

  .delete('/projects/:id/repository/branches/:branch', documented({ summary: 'Delete a branch', responses: { 204: null, 400: 'Error', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const project = await userProject(c, w.auth, 'push_code');
    const branch = await branchOf(c, project);
    // Branches::DeleteService: the branch check refuses the default branch, and a protected one but to maintainers (400).
    await deleteBranch(w, project.row.id, branch.name, refWriter(c, project)!);
    return c.body(null, 204);
  })

  // ─────────────── Blobs and merge bases (API::Repositories) ───────────────
  .get('/projects/:id/repository/blobs/:sha', documented({ summary: 'Get a blob from the repository', ...READ, responses: { 200: BLOB, ...REFUSED } }), async (c) => {
    const blob = await blobOf(c);
    return c.json({ size: blob.content.length, encoding: 'base64', content: Buffer.from(blob.content).toString('base64'), sha: blob.sha });
  })

  .get('/projects/:id/repository/blobs/:sha/raw', documented({ summary: 'Get raw blob contents from the repository', ...READ, responses: { 200: RAW_TEXT, ...REFUSED } }), async (c) => {
    const blob = await blobOf(c);
    return c.body(Buffer.from(blob.content), 200, { 'Content-Type': 'text/plain; charset=utf-8' });
  })

  .get('/projects/:id/repository/merge_base', documented({ summary: 'Get the common ancestor between commits', params: mergeBaseShape, ...READ, responses: { 200: 'Commit', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, mergeBaseShape);
    const project = await userProject(c, auth, 'download_code');
    if (p.refs.length < 2) throw serviceError('Provide at least 2 refs');
    const { db } = appContext(c);
    // Gitlab::Git::MergeBase: each ref a commit, the unknown ones named in the order given.
    const commits = await Promise.all(p.refs.map((ref) => resolveCommit(db, project.row.id, ref)));
    const unknown = p.refs.filter((_, i) => commits[i] === undefined);
    if (unknown.length > 0) throw serviceError(`Could not find ${unknown.length === 1 ? 'ref' : 'refs'}: ${unknown.join(', ')}`);
    const [first, ...rest] = commits.map((commit) => commit!.sha);
    const base = await mergeBase(db, project.row.id, first!, rest);
    if (base === null) throw notFound('Merge Base');
    return c.json(toCommit((await findCommit(db, project.row.id, base))!, webUrlOf(c, project)));
  })

  // Repository#contributors (GitLab 12): the default branch's first 2,000 commits but merges, by author email.
  .get('/projects/:id/repository/contributors', documented({ summary: 'Get repository contributors', params: contributorsShape, ...READ, responses: { 200: 'Contributor[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, contributorsShape);
    const project = await userProject(c, auth, 'download_code');
    const { db } = appContext(c);
    const head = project.row.default_branch === null ? undefined : await resolveCommit(db, project.row.id, project.row.default_branch);
    // GitLab rescues an empty repository's failure as a bare 404.
    if (!head) throw notFound();
    const log = await commitLog(db, project.row.id, head, { skipMerges: true, limit: CONTRIBUTOR_COMMITS });
    const byEmail = new Map<string, { name: string; email: string; commits: number; additions: number; deletions: number }>();
    for (const commit of log) {
      const { name, email } = commit.author;
      const contributor = byEmail.get(email) ?? { name: '', email, commits: 0, additions: 0, deletions: 0 };
      if (contributor.name.trim() === '') contributor.name = name;
      contributor.commits += 1;
      byEmail.set(email, contributor);
    }
    // Commit.order_by (ties as met, newest commit first).
    const key = p.order_by;
    const sign = p.sort === 'desc' ? -1 : 1;
    const contributors = [...byEmail.values()].sort((a, b) => sign * (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0));
    return c.json(await paginateArray(c, contributors));
  })

  // ─────────────── Tree ───────────────
  .get('/projects/:id/repository/tree', documented({ summary: 'Get a project repository tree', params: treeShape, ...READ, responses: { 200: 'TreeObject[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, treeShape);
    const project = await userProject(c, auth, 'download_code');
    const { db } = appContext(c);
    const commit = await resolveCommit(db, project.row.id, p.ref ?? project.row.default_branch ?? 'master');
    const path = (p.path ?? '').split('/').filter((s) => s !== '').join('/');
    const at = commit ? await entryAt(db, project.row.id, commit.tree, path) : undefined;
    if (!at || at.mode !== MODES.tree) throw notFound('Tree');
    // Repository#tree: trees first, then blobs, each in git's order (recursive: `ls-tree -r -t`'s order).
    const trees: ReturnType<typeof toTreeObject>[] = [];
    const blobs: ReturnType<typeof toTreeObject>[] = [];
    const walk = async (sha: string, prefix: string) => {
      for (const entry of (await readTree(db, project.row.id, sha)) ?? []) {
        const entryPath = `${prefix}${entry.name}`;
        (entry.mode === MODES.tree ? trees : blobs).push(toTreeObject(entry, entryPath));
        if (p.recursive && entry.mode === MODES.tree) await walk(entry.sha, `${entryPath}/`);
      }
    };
    await walk(at.sha, path === '' ? '' : `${path}/`);
    return c.json(await paginateArray(c, [...trees, ...blobs]));
  })

  // ─────────────── Files ───────────────
  // GET (and HEAD, which hono answers with GET's headers and no body) of a file: its blob_data as
  // X-Gitlab-* headers (GitLab: lib/api/files.rb, set_http_headers(blob_data)), then the content.
  .get('/projects/:id/repository/files/:file_path/raw', documented({ summary: 'Get raw file contents from the repository', params: fileShape, ...READ, responses: { 200: RAW_TEXT, ...REFUSED } }), async (c) => {
    const file = await fileAt(c);
    await setFileHeaders(c, file);
    return c.body(Buffer.from(file.content), 200, { 'Content-Type': 'text/plain; charset=utf-8' });
  })

  // GitLab 13's blame (clients call it): the file's headers, then its lines in runs of one commit.
  .get('/projects/:id/repository/files/:file_path/blame', documented({ summary: 'Get blame file from the repository', params: fileShape, ...READ, responses: { 200: 'BlameRange[]', ...REFUSED } }), async (c) => {
    const file = await fileAt(c);
    await setFileHeaders(c, file);
    if (c.req.method === 'HEAD') return c.body(null, 200);
    return c.json((await blame(appContext(c).db, file.projectId, file.commit, file.path, file.content)).map(toBlameRange));
  })

  .get('/projects/:id/repository/files/:file_path', documented({ summary: 'Get a file from the repository', params: fileShape, ...READ, responses: { 200: 'File', ...REFUSED } }), async (c) => {
    const file = await fileAt(c);
    return c.json(await setFileHeaders(c, file));
  })

  // API::Files' writes: one commit of one action through Files::Create/Update/DeleteService,
  // answered with the file's path and branch (201, 200) or nothing (204).
  .post('/projects/:id/repository/files/:file_path', documented({ summary: 'Create new file in repository', params: extendedFileShape, responses: { 201: FILE_WRITTEN, ...REFUSED } }), async (c) => {
    const file = await writeFile(c, 'create');
    return c.json(file, 201);
  })

  .put('/projects/:id/repository/files/:file_path', documented({ summary: 'Update existing file in repository', params: extendedFileShape, responses: { 200: FILE_WRITTEN, ...REFUSED } }), async (c) => {
    const file = await writeFile(c, 'update');
    return c.json(file, 200);
  })

  .delete('/projects/:id/repository/files/:file_path', documented({ summary: 'Delete an existing file in repository', params: simpleFileShape, responses: { 204: null, ...REFUSED } }), async (c) => {
    await writeFile(c, 'delete');
    return c.body(null, 204);
  });

/**
 * Files::CreateService, UpdateService, DeleteService (GitLab 12): push_code, then
 * Commits::CreateService's checks (the branch may be pushed to, then the commit's own), and
 * their refusals as `{"message": …}` with 400; git's index refuses a file that is (create)
 * or is not (update, delete) there.
 */
async function writeFile(c: Context, action: 'create' | 'update' | 'delete'): Promise<{ file_path: string; branch: string }> {
  const w = await requireWriter(c);
  const filePath = c.req.param('file_path') ?? '';
  const p = declaration(await rawParams(c));
  p.check(isTraversal(filePath) ? 'file_path should be a valid file path' : undefined);
  const parsed = action === 'delete' ? { ...p.parse(simpleFileShape), content: undefined, encoding: undefined, last_commit_id: undefined } : p.parse(extendedFileShape);
  p.done();
  const project = await userProject(c, w.auth, 'push_code');
  const { may } = await branchAccess(c, project);
  if (!may('push', parsed.branch)) throw serviceError('You are not allowed to push into this branch');
  const committer = await committerOf(appContext(c).db, w.auth.user.id);
  const content = parsed.content === undefined ? undefined : Buffer.from(parsed.content, parsed.encoding === 'base64' ? 'base64' : 'utf8');
  await commitFiles(w, {
    projectId: project.row.id,
    branch: parsed.branch,
    startBranch: parsed.start_branch ?? parsed.branch,
    message: parsed.commit_message,
    actions: [{ action, filePath, content }],
    // Gitlab::Git::Repository#multi_action: the author given (both fields), else the committer.
    author: parsed.author_email !== undefined && parsed.author_name !== undefined ? { name: parsed.author_name, email: parsed.author_email } : committer,
    committer,
    writer: refWriter(c, project)!,
    refusals: 'index',
    ...(parsed.last_commit_id !== undefined && action === 'update' ? { lastSeen: { path: filePath, sha: parsed.last_commit_id } } : {}),
  });
  return { file_path: filePath, branch: parsed.branch };
}

/**
 * API::Commits' cherry_pick and revert (GitLab 12): download_code, push access to `branch`
 * (403), the commit (404 Commit), the branch (404 Branch), then Commits::CherryPickService or
 * RevertService (400 with its message); 201 with Entities::Commit of the new commit.
 */
async function pick(c: Context, direction: 'cherry_pick' | 'revert') {
  const w = await requireWriter(c);
  const p = await params(c, pickShape);
  const project = await userProject(c, w.auth, 'download_code');
  const { may } = await branchAccess(c, project);
  if (!may('push', p.branch)) throw forbidden('You are not allowed to push into this branch');
  const commit = await commitOf(c, project, c.req.param('sha') ?? '');
  const { db } = appContext(c);
  if (!(await findBranch(db, project.row.id, p.branch))) throw notFound('Branch');
  const sha = await pickOnto(w, {
    projectId: project.row.id,
    branch: p.branch,
    commitSha: commit.sha,
    direction,
    committer: await committerOf(db, w.auth.user.id),
    writer: refWriter(c, project)!,
  });
  return c.json(toCommit((await findCommit(db, project.row.id, sha))!, webUrlOf(c, project)), 201);
}

/** API::Repositories#assign_blob_vars!: the blob of that SHA, or 404 `Blob Not Found` (a tree or a commit is not a blob). */
async function blobOf(c: Context) {
  const auth = await authenticate(c);
  const project = await userProject(c, auth, 'download_code');
  const sha = c.req.param('sha') ?? '';
  const object = /^[0-9a-f]{40}$/.test(sha) ? await findObject(appContext(c).db, project.row.id, sha) : undefined;
  if (!object || object.type !== 'blob') throw notFound('Blob');
  return object;
}

/** Header values go out as bytes: a name beyond Latin-1 as its UTF-8 bytes, as Rack sends it. */
const headerValue = (value: string) => Buffer.from(value, 'utf8').toString('latin1');

/** API::Files#blob_data (last_commit_id as the GET route always read it), each field but the content also as `X-Gitlab-<Field-Name>`. */
async function setFileHeaders(c: Context, file: Awaited<ReturnType<typeof fileAt>>) {
  const last = await lastCommitFor(appContext(c).db, file.projectId, file.commit.sha, file.path, file.blobId);
  if (last === undefined) throw new Error(`the path change index names no commit of ${file.path} at ${file.commit.sha}`);
  const data = toFile({ path: file.path, ref: file.ref, blobId: file.blobId, commitId: file.commit.sha, lastCommitId: last, content: file.content });
  for (const [key, value] of Object.entries(data)) {
    if (key === 'content') continue;
    c.header(`X-Gitlab-${key.split('_').map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('-')}`, headerValue(String(value)));
  }
  return data;
}

/** API::Files: `requires :ref`; the commit of the ref (404 Commit), the blob at the path (404 File). */
async function fileAt(c: Context): Promise<{ projectId: number; path: string; ref: string; commit: CommitView; commitId: string; blobId: string; content: Uint8Array }> {
  const auth = await authenticate(c);
  const p = await params(c, fileShape);
  const project = await userProject(c, auth, 'download_code');
  const { db } = appContext(c);
  const path = c.req.param('file_path') ?? '';
  const commit = await commitOf(c, project, p.ref);
  const entry = await entryAt(db, project.row.id, commit.tree, path);
  const object = entry && entry.mode !== MODES.tree ? await findObject(db, project.row.id, entry.sha) : undefined;
  if (!object) throw notFound('File');
  return { projectId: project.row.id, path, ref: p.ref, commit, commitId: commit.sha, blobId: object.sha, content: object.content };
}
