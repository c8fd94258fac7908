import { Hono, type Context } from 'hono';
import { tokenDigest } from '../../security/secrets.js';
import { DomainError } from '../../domain/errors.js';
import { looseObject } from '../../domain/repository/objects.js';
import { collaborationBranches } from '../../projections/merge-requests/collaboration.js';
import { findObject } from '../../projections/repository/queries.js';
import { listRefs } from '../../projections/repository/refs.js';
import { findTokenWithUser } from '../../projections/users/tokens.js';
import { appContext, type AppEnv, today, type Auth } from '../kernel/context.js';
import { documented, mediaTypes, RAW_TEXT, type RouteDoc } from '../kernel/documented.js';
import { header } from '../kernel/request.js';
import { userProject, type ProjectScope } from '../kernel/scope.js';

/**
 * `git clone <http_url_to_repo>`, read-only, over git's dumb HTTP protocol: the refs
 * (`info/refs`), `HEAD` and loose objects (`objects/xx/yyyy…`, deflated on the fly) served
 * from the object store. No pack files (`objects/info/packs` is empty). The smart protocol
 * (`info/refs?service=git-upload-pack`, `git-upload-pack`) is ./git-upload-pack.ts, mounted
 * before these routes with the same access (`gitHttp`); any other `info/refs` is the dumb list.
 * Push (`git-receive-pack`) is ./git-receive-pack.ts, behind `gitHttp(…, 'git-receive-pack')`:
 * GitLab's push access (a signed-in caller, a token that may push, push_code).
 *
 * Access as GitLab's Git HTTP (Repositories::GitHttpClientController, Gitlab::GitAccess, 12.x):
 * a public project anonymously; otherwise HTTP basic auth with a personal access token as the
 * password (any username). 401 with a Basic challenge for anonymous callers and bad
 * credentials; 404 for a signed-in caller who may not see the project; 403 for one who sees it
 * but may not download its code (or whose token's scopes do not allow it).
 */

const CHALLENGE = 'Basic realm="GitLab"';
/** Gitlab::Auth#abilities_for_scopes: the token scopes that give :download_code. */
const DOWNLOAD_SCOPES = ['api', 'read_api', 'read_repository', 'write_repository'];
/** …and those that give :push_code. */
const PUSH_SCOPES = ['api', 'write_repository'];

/** What the caller asks of the project: to fetch (git-upload-pack, the dumb protocol) or to push (git-receive-pack). */
export type GitService = 'git-upload-pack' | 'git-receive-pack';

class GitHttpRefusal extends Error {
  constructor(
    readonly status: 401 | 403 | 404,
    readonly text: string,
  ) {
    super(text);
  }
}

const denied = () => new GitHttpRefusal(401, 'HTTP Basic: Access denied\n');
const projectNotFound = () => new GitHttpRefusal(404, 'The project you were looking for could not be found.');

/** The caller of HTTP basic auth: the personal access token is the password; none sent is anonymous. */
async function basicAuth(c: Context): Promise<Auth> {
  const authorization = header(c, 'authorization');
  if (!authorization || !/^basic\s+/i.test(authorization)) return { user: null, token: null, sudoFrom: null };
  const decoded = Buffer.from(authorization.replace(/^basic\s+/i, '').trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const password = colon < 0 ? '' : decoded.slice(colon + 1);
  if (password === '') throw denied();
  const found = await findTokenWithUser(appContext(c).db, tokenDigest(password));
  if (!found || found.token.revoked || (found.token.expires_at !== null && found.token.expires_at <= today(c))) throw denied();
  if (found.user.state === 'blocked') throw new GitHttpRefusal(403, 'Your account has been blocked.');
  return { user: found.user, token: found.token, sudoFrom: null };
}

/** The project of `<full path>.git`, readable by the caller, whose code they may download (or push, for git-receive-pack). */
async function gitProject(c: Context, service: GitService): Promise<ProjectScope> {
  const auth = await basicAuth(c);
  // The request's caller, as the API's authentication records it (its writes' actor, the log line).
  c.set('auth' as never, auth as never);
  const push = service === 'git-receive-pack';
  // Gitlab::GitAccess#check_authentication_abilities!: a push needs a signed-in caller (the
  // controller asks anonymous ones to sign in) whose token may push, before the project is looked at.
  if (push && !auth.user) throw denied();
  if (push && auth.token && !auth.token.scopes.some((scope) => PUSH_SCOPES.includes(scope))) throw new GitHttpRefusal(403, 'You are not allowed to upload code.');
  // http_url_to_repo is `<external url>/<full path>.git`: an external URL's own path (served
  // behind a proxy that keeps it) is not part of the project's.
  const prefix = new URL(appContext(c).config.externalUrl).pathname.replace(/^\/+|\/+$/g, '');
  let path = (c.req.param('repo') ?? '').replace(/\.git$/, '');
  if (prefix !== '' && path.toLowerCase().startsWith(`${prefix.toLowerCase()}/`)) path = path.slice(prefix.length + 1);
  let project: ProjectScope;
  try {
    project = await userProject(c, auth, undefined, path);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    // Who has not signed in is asked to, never told whether the project exists.
    throw auth.user ? projectNotFound() : denied();
  }
  // check_change_access! (changes `_any`): push_code on the project, or a branch of it that a merge request
  // lets the caller push to (Project#any_branch_allows_collaboration?); each ref is checked with the push.
  if (push) {
    if (!project.can('push_code') && (await collaborationBranches(appContext(c).db, project.row.id, project.viewer)).size === 0) {
      throw new GitHttpRefusal(403, 'You are not allowed to push code to this project.');
    }
    return project;
  }
  if (!project.can('download_code') || (auth.token && !auth.token.scopes.some((scope) => DOWNLOAD_SCOPES.includes(scope)))) {
    if (!auth.user) throw denied();
    throw new GitHttpRefusal(403, 'You are not allowed to download code from this project.');
  }
  return project;
}

/**
 * Runs a git HTTP handler after authorizing the caller for the project (download_code, or
 * push_code for git-receive-pack), answering refusals as GitLab's git HTTP controller (plain
 * text). Shared by the dumb and smart protocols.
 */
export const gitHttp = (handler: (c: Context, project: ProjectScope) => Promise<Response>, service: GitService = 'git-upload-pack') => async (c: Context) => {
  try {
    return await handler(c, await gitProject(c, service));
  } catch (error) {
    if (!(error instanceof GitHttpRefusal)) throw error;
    if (error.status === 401) c.header('WWW-Authenticate', CHALLENGE);
    return c.text(error.text, error.status);
  }
};

const NO_CACHE = { 'Cache-Control': 'no-cache', 'Content-Type': 'text/plain; charset=utf-8' };

/** What git over HTTP refuses, in plain text as GitLab's git HTTP controller: 401 (with its Basic challenge), 403, 404. */
export const GIT_REFUSED = { 401: RAW_TEXT, 403: RAW_TEXT, 404: RAW_TEXT } as const satisfies RouteDoc['responses'];
/** A git route: anonymous callers too (a public project's clone), HTTP basic otherwise (the document's git security). */
const GIT = { auth: 'optional' } as const;

export const gitHttpRoutes = new Hono<AppEnv>()
  // The dumb protocol's ref list: `<sha>\t<ref>` by name, an annotated tag's commit on the
  // line after it as `<ref>^{}`, as `git update-server-info` writes it (the merge requests' refs too).
  .get(
    '/:repo{.+\\.git}/info/refs',
    gitHttp(async (c, project) => {
      const refs = (await listRefs(appContext(c).db, project.row.id, { mergeRequests: true })).flatMap((ref) => [[ref.name, ref.sha] as const, ...(ref.peeled ? [[`${ref.name}^{}`, ref.peeled] as const] : [])]);
      return c.body(refs.map(([name, sha]) => `${sha}\t${name}\n`).join(''), 200, NO_CACHE);
    }),
  )

  .get(
    '/:repo{.+\\.git}/HEAD',
    documented({ summary: "The dumb protocol's HEAD: `ref: refs/heads/<default branch>`", ...GIT, responses: { 200: RAW_TEXT, ...GIT_REFUSED } }),
    gitHttp(async (c, project) => c.body(`ref: refs/heads/${project.row.default_branch ?? 'master'}\n`, 200, NO_CACHE)),
  )

  // No pack: every object is served loose.
  .get(
    '/:repo{.+\\.git}/objects/info/packs',
    documented({ summary: "The dumb protocol's pack list: empty, every object is served loose", ...GIT, responses: { 200: RAW_TEXT, ...GIT_REFUSED } }),
    gitHttp(async (c) => c.body('', 200, NO_CACHE)),
  )

  .get(
    '/:repo{.+\\.git}/objects/:dir{[0-9a-f]{2}}/:rest{[0-9a-f]{38}}',
    documented({ summary: 'A loose object of the dumb protocol (zlib-deflated)', ...GIT, responses: { 200: mediaTypes('application/x-git-loose-object'), ...GIT_REFUSED } }),
    gitHttp(async (c, project) => {
      const sha = `${c.req.param('dir')}${c.req.param('rest')}`;
      const object = await findObject(appContext(c).db, project.row.id, sha);
      if (!object) return c.text('Not Found', 404);
      return c.body(looseObject(object.type, object.content), 200, { 'Content-Type': 'application/x-git-loose-object', 'Cache-Control': 'public, max-age=31536000, immutable' });
    }),
  );
