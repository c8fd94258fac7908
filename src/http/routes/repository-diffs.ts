import { Hono, type Context } from 'hono';
import { notFound } from '../../domain/errors.js';
import { limitDiffs, pruneTooLarge } from '../../domain/repository/diffs.js';
import type { Db } from '../../database/database.js';
import { commitsBetween, mergeBase } from '../../projections/repository/history.js';
import { collectDiffs, diffCommits, findCommits, resolveCommit } from '../../projections/repository/queries.js';
import { projectWebUrl } from '../entities/projects.js';
import { type CompareView, toCompare, toDiff } from '../entities/repository-diffs.js';
import { authenticate } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { pageOf, setPaginationHeaders } from '../kernel/pagination.js';
import { params, required, t, withDefault, type Shape } from '../kernel/params.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { userProject } from '../kernel/scope.js';

/**
 * A commit's diff (API::Commits, `GET …/commits/:sha/diff`) and the compare of two refs
 * (API::Repositories, `GET …/repository/compare`), GitLab 12.x, over the diffs of
 * src/domain/repository/diffs.ts. Both ask download_code.
 */

/**
 * Gitlab::Git::Compare (12.x): `from..to`'s commits and the diff from the merge base
 * (`git diff from...to`), or from `from` itself when `straight`. An unknown ref is an empty
 * compare with `compare_same_ref` null (GitLab 12 answers 200; the 404 "Ref Not Found" is 13.x's).
 */
async function compare(db: Db, projectId: number, from: string, to: string, straight: boolean): Promise<CompareView> {
  const [base, head] = await Promise.all([resolveCommit(db, projectId, from.trim()), resolveCommit(db, projectId, to.trim())]);
  if (!base || !head) return { commits: [], diffs: [], overflow: false, same: null };
  if (base.sha === head.sha) return { commits: [], diffs: [], overflow: false, same: true };
  // Gitlab::Git::Commit.between: `git log --reverse base..head`.
  const shas = (await commitsBetween(db, projectId, base.sha, head.sha)).reverse();
  const commits = await findCommits(db, projectId, shas);
  // Gitlab::Git::Diff.between: from `repo.merge_base(head, base)` unless straight.
  const start = straight ? base.sha : await mergeBase(db, projectId, head.sha, base.sha);
  const all = await diffCommits(db, projectId, start, head.sha);
  // `compare.diffs(limits: false)`: every file (a patch past the size limit emptied); the
  // timeout flag is the limited collection's overflow.
  return { commits, diffs: pruneTooLarge(all), overflow: limitDiffs(all).overflow, same: false };
}

const compareShape = { from: required(t.string()), to: required(t.string()), straight: withDefault(t.boolean(), false) } satisfies Shape;

export const repositoryDiffRoutes = new Hono<AppEnv>()
  .get('/projects/:id/repository/commits/:sha/diff', documented({ summary: 'Get the diff for a specific commit of a project', auth: 'optional', responses: { 200: 'Diff[]', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const page = await pageOf(c);
    const project = await userProject(c, auth, 'download_code');
    const { db } = appContext(c);
    const commit = await resolveCommit(db, project.row.id, c.req.param('sha'));
    if (!commit) throw notFound('Commit');
    // Commit#raw_diffs: against the first parent, with DiffCollection's default limits.
    const { diffs } = await collectDiffs(db, project.row.id, commit.parents[0] ?? null, commit.sha);
    setPaginationHeaders(c, page, diffs.length);
    return c.json(diffs.slice(page.offset, page.offset + page.perPage).map(toDiff));
  })

  .get('/projects/:id/repository/compare', documented({ summary: 'Compare two branches, tags, or commits', params: compareShape, auth: 'optional', responses: { 200: 'Compare', ...REFUSED } }), async (c) => {
    const auth = await authenticate(c);
    const p = await params(c, compareShape);
    const project = await userProject(c, auth, 'download_code');
    const view = await compare(appContext(c).db, project.row.id, p.from, p.to, p.straight);
    return c.json(toCompare(view, webUrlOf(c, project.row.path_with_namespace)));
  });

const webUrlOf = (c: Context, path: string) => projectWebUrl(appContext(c).config, path);
