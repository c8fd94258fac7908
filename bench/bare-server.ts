/**
 * The ceiling of the black-box phase (bench/README.md, "The bare server"): a process of its
 * own running hono + pg on the server's database, each route doing the least work that
 * could answer the request it stands for. Started by bench/blackbox/processes.ts with
 * DATABASE_URL, PORT and BARE_POOL; it prints `listening <port>` when ready.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.BARE_POOL ?? 10) });
pool.on('error', () => {}); // idle clients die when the database is dropped

await pool.query('create table if not exists bench_scratch (id bigint generated always as identity primary key, payload jsonb not null, created_at timestamptz not null default now())');

const app = new Hono()
  // One indexed SELECT by primary key.
  .get('/row/:id', async (c) => {
    const { rows } = await pool.query('select * from users where id = $1', [Number(c.req.param('id'))]);
    return rows.length === 0 ? c.json({ message: '404 Not Found' }, 404) : c.json(rows[0]);
  })
  // A page of 20 rows and its count (what a paginated list answers with X-Total).
  .get('/page/:namespace', async (c) => {
    const namespace = Number(c.req.param('namespace'));
    const [page, count] = await Promise.all([
      pool.query('select * from projects where namespace_id = $1 order by created_at desc, id desc limit 20', [namespace]),
      pool.query('select count(*)::int as n from projects where namespace_id = $1', [namespace]),
    ]);
    c.header('X-Total', String(count.rows[0].n));
    return c.json(page.rows);
  })
  // A page of 20 merge-request-sized rows joined to their author and first assignee, and its count.
  .get('/merge_requests/:project', async (c) => {
    const project = Number(c.req.param('project'));
    const [page, count] = await Promise.all([
      pool.query(
        `select m.*, row_to_json(a) as author, row_to_json(s) as assignee
           from merge_requests m join users a on a.id = m.author_id left join users s on s.id = m.assignee_ids[1]
          where m.project_id = $1 order by m.created_at desc, m.id desc limit 20`,
        [project],
      ),
      pool.query('select count(*)::int as n from merge_requests where project_id = $1', [project]),
    ]);
    c.header('X-Total', String(count.rows[0].n));
    return c.json(page.rows);
  })
  // One INSERT (autocommit) of the request's JSON body.
  .post('/insert', async (c) => {
    const body = await c.req.text();
    const { rows } = await pool.query('insert into bench_scratch (payload) values ($1) returning id, created_at', [body]);
    return c.json(rows[0], 201);
  });

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1' }, (info) => process.stdout.write(`listening ${info.port}\n`));
const stop = () => server.close(() => void pool.end().finally(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
