import { Hono } from 'hono';
import type { DatabaseHandle } from '../database/database.js';
import { type AppContext, type AppEnv } from './kernel/context.js';
import { asOf } from './kernel/as-of.js';
import { errorResponse, methodNotAllowed, routeNotFound, sendError } from './kernel/errors.js';
import { bodyLimit, parameterGuard, requestIdOf, responseHeaders } from './kernel/guards.js';
import { isConnectionError } from '../database/pg-client.js';
import { healthRoutes, metaRoutes } from './routes/meta.js';
import { userRoutes } from './routes/users.js';
import { groupRoutes } from './routes/groups.js';
import { projectRoutes } from './routes/projects.js';
import { projectShareRoutes } from './routes/projects/share.js';
import { projectForkRoutes } from './routes/projects/forks.js';
import { projectTransferRoutes } from './routes/projects/transfer.js';
import { memberRoutes } from './routes/members.js';
import { accessRequestRoutes } from './routes/access-requests.js';
import { epicRoutes } from './routes/epics.js';
import { epicIssueRoutes } from './routes/epic-issues.js';
import { labelRoutes } from './routes/labels.js';
import { boardRoutes } from './routes/boards.js';
import { issueLinkRoutes } from './routes/issue-links.js';
import { milestoneRoutes } from './routes/milestones.js';
import { mergeRequestListRoutes } from './routes/merge-requests/lists.js';
import { todoRoutes } from './routes/todos.js';
import { mergeRequestTodoRoutes } from './routes/merge-requests/todo.js';
import { environmentRoutes } from './routes/environments.js';
import { projectSnippetRoutes } from './routes/project-snippets.js';
import { snippetRoutes } from './routes/snippets.js';
import { repositoryRoutes } from './routes/repository.js';
import { repositoryDiffRoutes } from './routes/repository-diffs.js';
import { repositoryArchiveRoutes } from './routes/repository-archive.js';
import { gitHttpRoutes } from './routes/git-http.js';
import { gitUploadPackRoutes } from './routes/git-upload-pack.js';
import { gitReceivePackRoutes } from './routes/git-receive-pack.js';
import { uploadRoutes } from './routes/uploads.js';
import { mergeRequestCrudRoutes } from './routes/merge-requests/crud.js';
import { mergeRequestVersionRoutes } from './routes/merge-requests/versions.js';
import { broadcastMessageRoutes } from './routes/broadcast-messages.js';
import { deployKeyRoutes } from './routes/deploy-keys.js';
import { userSshKeyRoutes } from './routes/user-ssh-keys.js';
import { notificationSettingRoutes } from './routes/notification-settings.js';
import { protectedBranchRoutes } from './routes/protected-branches.js';
import { protectedTagRoutes, repositoryTagRoutes } from './routes/repository-tags.js';
import { applicationSettingsRoutes } from './routes/application-settings.js';
import { auditEventRoutes } from './routes/audit-events.js';
import { integrationRoutes } from './routes/integrations.js';
import { hookRoutes } from './routes/hooks.js';
import { eventRoutes } from './routes/events.js';
import { featureFlagRoutes } from './routes/feature-flags.js';
import { groupSamlRoutes, SCIM_PREFIX, scimRoutes } from './routes/scim.js';
import { geoNodeRoutes } from './routes/geo-nodes.js';
import { readOnlySecondary } from './kernel/read-only.js';
import { idempotency } from './kernel/idempotency.js';
import { containerRepositoryRoutes } from './routes/container-repositories.js';
import { containerRegistryEventRoutes } from './routes/container-registry-event.js';
import { mergeRequestTimeTrackingRoutes } from './routes/merge-requests/time-tracking.js';
import { mergeRequestSubscriptionRoutes } from './routes/merge-requests/subscriptions.js';
import { mergeRequestMergeRoutes } from './routes/merge-requests/merge.js';
import { mergeRequestRebaseRoutes } from './routes/merge-requests/rebase.js';
import { issueCrudRoutes } from './routes/issues/crud.js';
import { issueListRoutes } from './routes/issues/lists.js';
import { issueMoreRoutes } from './routes/issues/more.js';
import { issueSharedRoutes } from './routes/issues/shared.js';
import { issueClosingRoutes } from './routes/issues/closing.js';
import { logRoutes } from './routes/log.js';
import { noteRoutes } from './routes/notes/notes.js';
import { discussionRoutes } from './routes/notes/discussions.js';
import { awardEmojiRoutes } from './routes/notes/award-emoji.js';
import { commitCommentRoutes } from './routes/notes/commit-comments.js';
import { resourceEventRoutes } from './routes/resource-events.js';
import { createMetrics, routeLabel } from './metrics.js';
import { openApiRoutes } from './routes/openapi.js';

export const API_PREFIX = '/api/v4';

/**
 * The HTTP application: GitLab's API v4 under /api/v4 plus health checks and metrics. A
 * `.json` suffix is accepted on every path; errors become GitLab's bodies in one place.
 * `database` gives the metrics its connection pool.
 */
export function createApp(app: AppContext, database?: Pick<DatabaseHandle, 'kind' | 'pool'>) {
  const metrics = createMetrics(app, database);
  const root = new Hono<AppEnv>({
    getPath: (request) => {
      const path = pathOf(request.url);
      return path.endsWith('.json') ? path.slice(0, -5) : path;
    },
  });

  root.use('*', metrics.middleware);
  root.use('*', async (c, next) => {
    const started = performance.now();
    const requestId = requestIdOf(c);
    c.set('app', app);
    c.set('requestId', requestId);
    c.header('X-Request-Id', requestId);
    await next();
    if (app.logger.isLevelEnabled('info')) {
      app.logger.info({
        method: c.req.method,
        route: routeLabel(c),
        path: pathOf(c.req.url),
        status: c.res.status,
        duration_ms: Math.round((performance.now() - started) * 100) / 100,
        user_id: c.var.auth?.user?.id ?? null,
        request_id: requestId,
      });
    }
  });

  // Before routing and authentication: GitLab's headers (and the CORS preflight), the body
  // limit, then the parameters parsed once (malformed bodies and NUL bytes are 400 here).
  root.use('*', responseHeaders(API_PREFIX));
  // A Geo secondary refuses writes; a primary pays nothing for it on each request.
  if (app.config.geo.secondary) root.use(`${API_PREFIX}/*`, readOnlySecondary);
  const limitBody = bodyLimit(app.config.maxBodyBytes);
  // A push's body is its pack: the route reads it as a stream up to FORGELOG_MAX_PUSH_BYTES.
  root.use('*', (c, next) => (c.req.method === 'POST' && c.req.path.endsWith('/git-receive-pack') ? next() : limitBody(c, next)));
  root.use('*', parameterGuard);
  // Writes sent with an Idempotency-Key run in one transaction that stores their answer (a forgelog extension).
  root.use(`${API_PREFIX}/*`, idempotency({ killAfterCommitKey: process.env.FORGELOG_TEST_KILL_AFTER_COMMIT_KEY || undefined }));
  // GETs sent with as_of read the tables as they stood at that log position (a forgelog extension).
  root.use(`${API_PREFIX}/*`, asOf);

  const api = new Hono<AppEnv>();
  api.route('/', metaRoutes);
  api.route('/', userRoutes);
  api.route('/', groupRoutes);
  api.route('/', projectRoutes);
  api.route('/', projectShareRoutes);
  api.route('/', projectForkRoutes);
  api.route('/', projectTransferRoutes);
  api.route('/', memberRoutes);
  api.route('/', accessRequestRoutes);
  api.route('/', environmentRoutes);
  api.route('/', snippetRoutes);
  api.route('/', projectSnippetRoutes);
  api.route('/', mergeRequestCrudRoutes);
  api.route('/', mergeRequestVersionRoutes);
  api.route('/', broadcastMessageRoutes);
  api.route('/', deployKeyRoutes);
  api.route('/', userSshKeyRoutes);
  api.route('/', notificationSettingRoutes);
  api.route('/', protectedBranchRoutes);
  api.route('/', protectedTagRoutes);
  api.route('/', repositoryTagRoutes);
  api.route('/', applicationSettingsRoutes);
  api.route('/', auditEventRoutes);
  api.route('/', integrationRoutes);
  api.route('/', hookRoutes);
  api.route('/', eventRoutes);
  api.route('/', featureFlagRoutes);
  api.route('/', groupSamlRoutes);
  api.route('/', geoNodeRoutes);
  api.route('/', epicRoutes);
  api.route('/', epicIssueRoutes);
  api.route('/', milestoneRoutes);
  api.route('/', mergeRequestListRoutes);
  api.route('/', labelRoutes);
  api.route('/', boardRoutes);
  api.route('/', issueLinkRoutes);
  api.route('/', todoRoutes);
  api.route('/', mergeRequestTodoRoutes);
  api.route('/', containerRepositoryRoutes);
  api.route('/', repositoryRoutes);
  api.route('/', repositoryDiffRoutes);
  api.route('/', repositoryArchiveRoutes);
  api.route('/', containerRegistryEventRoutes);
  api.route('/', mergeRequestTimeTrackingRoutes);
  api.route('/', mergeRequestSubscriptionRoutes);
  api.route('/', mergeRequestMergeRoutes);
  api.route('/', mergeRequestRebaseRoutes);
  api.route('/', issueCrudRoutes);
  api.route('/', issueListRoutes);
  api.route('/', issueMoreRoutes);
  api.route('/', issueSharedRoutes);
  api.route('/', issueClosingRoutes);
  api.route('/', noteRoutes);
  api.route('/', discussionRoutes);
  api.route('/', awardEmojiRoutes);
  api.route('/', commitCommentRoutes);
  api.route('/', resourceEventRoutes);
  api.route('/', logRoutes);
  root.route(API_PREFIX, api);
  root.route(SCIM_PREFIX, scimRoutes);
  root.route('/', healthRoutes);
  root.route('/', metrics.routes);
  root.route('/', uploadRoutes);
  // The OpenAPI document of every route above and below, made from this route table when first asked.
  root.route('/', openApiRoutes(() => root.routes));
  // The smart protocol first: an info/refs it does not serve goes on to the dumb routes.
  root.route('/', gitReceivePackRoutes);
  root.route('/', gitUploadPackRoutes);
  root.route('/', gitHttpRoutes);

  root.notFound((c) => {
    const path = new URL(c.req.url).pathname.replace(/\.json$/, '');
    // Grape (the API under /api): 405 with an Allow header naming the path's methods (RFC 9110).
    // Rails' routes (git over HTTP, uploads) answer another method with 404.
    const allowed = new Set(root.routes.filter((r) => r.method !== 'ALL' && r.path.startsWith('/api/') && routeMatches(r.path, path)).map((r) => r.method));
    if (allowed.size > 0) {
      c.header('Allow', [...allowed, ...(allowed.has('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', '));
      // Grape answers OPTIONS on a known path itself: 204 with the Allow header.
      if (c.req.method === 'OPTIONS') return c.body(null, 204);
      return errorResponse(c, methodNotAllowed());
    }
    return errorResponse(c, routeNotFound());
  });

  root.onError((error, c) => {
    const sent = sendError(c, error);
    if (sent) return sent;
    // The database cannot be reached now: GitLab's answer while it is down. Whether a write
    // whose commit went unanswered happened is unknown; it was not acknowledged.
    if (isConnectionError(error)) {
      app.logger.warn({ err: error, request_id: c.var.requestId, path: c.req.path }, 'database unavailable');
      return c.json({ message: '503 Service Unavailable' }, 503);
    }
    app.logger.error({ err: error, request_id: c.var.requestId, path: c.req.path }, 'unhandled error');
    return c.json({ message: '500 Internal Server Error' }, 500);
  });

  return root;
}

/** The path of an absolute request URL, without parsing it whole. */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('://') + 3);
  const end = url.indexOf('?', start);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

const patternCache = new Map<string, RegExp>();

/**
 * Whether a route template matches a path, as the router reads it: `:name` is one segment,
 * `:name{regex}` what its constraint allows (slashes too: `:repo{.+\.git}`), `*` anything.
 */
function routeMatches(pattern: string, path: string): boolean {
  let regex = patternCache.get(pattern);
  if (!regex) {
    regex = new RegExp(`^${templateSource(pattern)}/?$`);
    patternCache.set(pattern, regex);
  }
  return regex.test(path);
}

function templateSource(pattern: string): string {
  let source = '';
  for (let i = 0; i < pattern.length; ) {
    const param = /^:\w+/.exec(pattern.slice(i));
    if (!param) {
      const char = pattern[i]!;
      source += char === '*' ? '.*' : char.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      i += 1;
      continue;
    }
    i += param[0].length;
    if (pattern[i] !== '{') {
      source += '[^/]+';
      continue;
    }
    // The constraint runs to its matching brace (it may hold quantifiers: `{[0-9a-f]{2}}`).
    let depth = 0;
    const start = i + 1;
    for (; i < pattern.length; i++) {
      if (pattern[i] === '{') depth += 1;
      else if (pattern[i] === '}' && --depth === 0) break;
    }
    source += `(?:${pattern.slice(start, i)})`;
    i += 1;
  }
  return source;
}
