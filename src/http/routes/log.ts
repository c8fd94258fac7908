import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { badRequest, notFound } from '../../domain/errors.js';
import { consistencyProof, inclusionProof, leafAtPosition, treeSize } from '../../eventstore/log-tree.js';
import { publicKeyPem, publishedHead, treeHeadJson } from '../../eventstore/tree-heads.js';
import { requireAdmin } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { INTEGER_TEXT, optional, params, required, type Shape } from '../kernel/params.js';
import { documented } from '../kernel/documented.js';

/**
 * forgelog's extension (no GitLab counterpart): the log as evidence, RFC 6962 §4's log
 * client messages in their JSON shapes (docs/log-evidence.md). Administrators only, as the
 * log itself is. The tree covers the sealed events; heads are signed with the key
 * FORGELOG_LOG_SIGNING_KEY(_FILE) names, kept outside the database.
 */

/** Without a signing key no head is published: say so rather than answer an empty log. */
function signingKey(c: Context) {
  const key = appContext(c).config.logHeads.signingKey;
  if (!key) throw notFound('Log signing key');
  return key;
}

const b64 = (hashes: readonly Buffer[]) => hashes.map((h) => h.toString('base64'));

/**
 * A tree size or a log position: a whole number from 0, as Grape reads an Integer from text,
 * up to 2^53 − 1 — both are bigint in the database, so `t.integer()`'s bound (PostgreSQL's
 * integer) would refuse a long log's. Anything else is "<param> is invalid".
 */
const COUNT = z.preprocess((v) => (typeof v === 'string' && INTEGER_TEXT.test(v) ? Number(v) : v), z.number().int().min(0).max(Number.MAX_SAFE_INTEGER));

const headShape = { tree_size: optional(COUNT) } satisfies Shape;
const consistencyShape = { first: required(COUNT), second: required(COUNT) } satisfies Shape;
const inclusionShape = { position: required(COUNT), tree_size: required(COUNT) } satisfies Shape;
/** Administrators; 404 without a signing key (and for a head or leaf that is not there). */
const LOG = { auth: 'admin' } as const;
const LOG_REFUSED = { 403: 'Error', 404: 'Error' } as const;

export const logRoutes = new Hono<AppEnv>()
  // RFC 6962 §4.3 get-sth; ?tree_size=N for a head published earlier.
  .get('/-/log/head', documented({ summary: "The event log's signed tree head (RFC 6962 get-sth; forgelog)", params: headShape, ...LOG, responses: { 200: { type: 'object' }, ...LOG_REFUSED } }), async (c) => {
    await requireAdmin(c);
    signingKey(c);
    const { tree_size } = await params(c, headShape);
    const head = await publishedHead(appContext(c).db, tree_size);
    if (!head) throw notFound('Tree head');
    return c.json(treeHeadJson(head));
  })

  .get('/-/log/public_key', documented({ summary: "The event log's public signing key, PEM (forgelog)", ...LOG, responses: { 200: { type: 'string', contentMediaType: 'application/x-pem-file' }, ...LOG_REFUSED } }), async (c) => {
    await requireAdmin(c);
    const pem = publicKeyPem(signingKey(c));
    return c.body(pem, 200, { 'Content-Type': 'application/x-pem-file' });
  })

  // RFC 6962 §4.4 get-sth-consistency.
  .get('/-/log/proof/consistency', documented({ summary: 'A consistency proof between two tree sizes (RFC 6962 get-sth-consistency; forgelog)', params: consistencyShape, ...LOG, responses: { 200: { type: 'object' }, ...LOG_REFUSED } }), async (c) => {
    await requireAdmin(c);
    const { first, second } = await params(c, consistencyShape);
    const db = appContext(c).db;
    const size = await treeSize(db);
    if (first > second) throw badRequest('first is larger than second');
    if (second > size) throw badRequest(`second is larger than the log tree (${size} leaves)`);
    return c.json({ consistency: b64(await consistencyProof(db, first, second)) });
  })

  // RFC 6962 §4.5 get-proof-by-hash, by log position instead of leaf hash.
  .get('/-/log/proof/inclusion', documented({ summary: "An inclusion proof of a log position's event (RFC 6962 get-proof-by-hash, by position; forgelog)", params: inclusionShape, ...LOG, responses: { 200: { type: 'object' }, ...LOG_REFUSED } }), async (c) => {
    await requireAdmin(c);
    const { position, tree_size } = await params(c, inclusionShape);
    const db = appContext(c).db;
    const size = await treeSize(db);
    if (tree_size < 1 || tree_size > size) throw badRequest(`tree_size must be from 1 to the log tree's ${size} leaves`);
    const leaf = position >= 1 ? await leafAtPosition(db, String(position)) : undefined;
    if (!leaf) throw notFound('Leaf');
    if (leaf.leafIndex >= tree_size) throw badRequest(`the event at position ${position} is leaf ${leaf.leafIndex}, outside a tree of ${tree_size}`);
    return c.json({ leaf_index: leaf.leafIndex, audit_path: b64(await inclusionProof(db, leaf.leafIndex, tree_size)) });
  });
