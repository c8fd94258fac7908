import type { Context } from 'hono';
import type { SelectQueryBuilder } from 'kysely';
import { sql } from 'kysely';
import { readTogether } from '../../database/read-together.js';
import { appContext } from './context.js';
import { paramErrors } from '../../domain/errors.js';
import { INTEGER_TEXT, rawParams } from './params.js';

export interface Page {
  readonly page: number;
  readonly perPage: number;
  readonly offset: number;
}

export const MAX_PER_PAGE = 100;
export const DEFAULT_PER_PAGE = 20;

/** Grape's `type: Integer` on page and per_page: absent or empty is the default, anything else not an integer is invalid. */
const toInt = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : typeof v === 'string' && INTEGER_TEXT.test(v) ? Number(v) : NaN);

/** GitLab: page < 1 means 1; per_page defaults to 20 and is clamped to 1..100; a non-integer is `{"error":"per_page is invalid"}`. */
export async function pageOf(c: Context): Promise<Page> {
  const raw = await rawParams(c);
  const requestedPage = toInt(raw.page);
  const requestedPerPage = toInt(raw.per_page);
  const invalid = [Number.isNaN(requestedPage) && 'page', Number.isNaN(requestedPerPage) && 'per_page'].filter((name) => name !== false);
  if (invalid.length > 0) throw paramErrors(invalid.map((name) => `${name} is invalid`));
  const page = requestedPage !== undefined && requestedPage >= 1 ? Math.min(requestedPage, 1_000_000) : 1;
  const perPage = requestedPerPage !== undefined && requestedPerPage >= 1 ? Math.min(requestedPerPage, MAX_PER_PAGE) : DEFAULT_PER_PAGE;
  return { page, perPage, offset: (page - 1) * perPage };
}

/** A URL for the same request with some query parameters replaced, on FORGELOG_EXTERNAL_URL. */
export function requestUrlWith(c: Context, replace: Record<string, string | number | undefined>): string {
  const url = new URL(c.req.url);
  const query = new URLSearchParams(url.search);
  for (const [key, value] of Object.entries(replace)) {
    if (value === undefined) query.delete(key);
    else query.set(key, String(value));
  }
  const search = query.toString();
  return `${appContext(c).config.externalUrl}${url.pathname}${search ? `?${search}` : ''}`;
}

/**
 * Offset pagination headers: X-Total, X-Total-Pages, X-Per-Page, X-Page, X-Next-Page, X-Prev-Page, Link.
 * `total` undefined is GitLab's page without counts (more than COUNT_LIMIT rows): no X-Total,
 * no X-Total-Pages, no `last` link, and a next page when this one is full (`hasNext`).
 */
export function setPaginationHeaders(c: Context, page: Page, total: number | undefined, hasNext = false) {
  const totalPages = total === undefined ? undefined : Math.max(Math.ceil(total / page.perPage), 1);
  const next = totalPages === undefined ? (hasNext ? page.page + 1 : undefined) : page.page < totalPages ? page.page + 1 : undefined;
  // Kaminari (GitLab's paginator): no previous page for the first page or past the last one.
  const prev = page.page > 1 && (totalPages === undefined || page.page <= totalPages) ? page.page - 1 : undefined;
  const link = (p: number) => requestUrlWith(c, { page: p, per_page: page.perPage });
  const links: string[] = [];
  if (prev !== undefined) links.push(`<${link(prev)}>; rel="prev"`);
  if (next !== undefined) links.push(`<${link(next)}>; rel="next"`);
  links.push(`<${link(1)}>; rel="first"`);
  if (totalPages !== undefined) {
    links.push(`<${link(totalPages)}>; rel="last"`);
    c.header('X-Total', String(total));
    c.header('X-Total-Pages', String(totalPages));
  }
  c.header('X-Per-Page', String(page.perPage));
  c.header('X-Page', String(page.page));
  c.header('X-Next-Page', next === undefined ? '' : String(next));
  c.header('X-Prev-Page', prev === undefined ? '' : String(prev));
  c.header('Link', links.join(', '));
}

/** The page of an array, with GitLab's headers (Kaminari.paginate_array: the array's length is the total). */
export async function paginateArray<T>(c: Context, items: readonly T[]): Promise<T[]> {
  const page = await pageOf(c);
  setPaginationHeaders(c, page, items.length);
  return items.slice(page.offset, page.offset + page.perPage);
}

/**
 * GitLab's `api_kaminari_count_with_limit` (Kaminari's MAX_COUNT_LIMIT): past this many rows a
 * list is answered without counts. Lists over the event log take it, because the log only grows
 * and counting all of a feed's rows would cost more than reading its page.
 */
export const COUNT_LIMIT = 10_000;

/**
 * Runs a filtered query as one page: the count and the rows, and sets the headers.
 * `query` must be the filtered selection without order/limit; `order` adds the ordering.
 * With `countLimit`, rows are counted up to that many and a larger list has no counts
 * (setPaginationHeaders).
 */
export async function paginate<DB, TB extends keyof DB, O>(
  c: Context,
  query: SelectQueryBuilder<DB, TB, O>,
  order: (q: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, O>,
  options: { countLimit?: number } = {},
): Promise<O[]> {
  const page = await pageOf(c);
  const { countLimit } = options;
  const { db } = appContext(c);
  // The page and its count in one round trip (read-together.ts).
  if (countLimit === undefined) {
    const [rows, counted] = await readTogether(db, [
      order(query).limit(page.perPage).offset(page.offset).compile(),
      query.clearSelect().select(sql<string>`count(*)`.as('count')).compile(),
    ]);
    setPaginationHeaders(c, page, Number((counted[0] as { count: string } | undefined)?.count ?? 0));
    return rows;
  }
  // One row past the page says whether a next page exists when the count is not known.
  const [rows, counted] = await readTogether(db, [
    order(query).limit(page.perPage + 1).offset(page.offset).compile(),
    sql<{ count: string }>`select count(*) as count from (${query.clearSelect().select(sql`1`.as('one')).limit(countLimit + 1)}) as limited`.compile(db),
  ]);
  const total = Number(counted[0]?.count ?? 0);
  setPaginationHeaders(c, page, total > countLimit ? undefined : total, rows.length > page.perPage);
  return rows.slice(0, page.perPage);
}

/** Keyset pagination: only a `Link rel="next"` carrying the cursor parameters, no X-Total. */
export function setKeysetNextLink(c: Context, cursor: Record<string, string | number> | undefined, perPage: number) {
  if (!cursor) return;
  c.header('Link', `<${requestUrlWith(c, { ...cursor, per_page: perPage })}>; rel="next"`);
}
