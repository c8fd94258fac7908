import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { PLANS, type Plan } from './domain/policy/licensed.js';

/** Runtime configuration, read once from the environment (every variable is documented in README.md). */

/** 10 MiB: GitLab's default attachment limit; no API v4 body here comes near it. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * 100 MiB: the largest `git push` body (its pack). A push is read whole and every object it
 * holds is kept in memory while it is checked and stored (about the pack's inflated size
 * again), so the bound is what one request may cost the process; GitLab.com's own push limit
 * was far larger (its packs go to disk), but a repository imported with a bigger first push
 * can be pushed a part of its history at a time.
 */
export const DEFAULT_MAX_PUSH_BYTES = 100 * 1024 * 1024;

/** An idle server sends no statement: the background loops wait on LISTEN and poll this rarely. */
export const DEFAULT_POLL_INTERVAL_MS = 30_000;

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** The heap may grow to twice what survived the last full GC (src/heap.ts). */
export const DEFAULT_HEAP_GROWING_PERCENT = 100;

/** GitLab's default `registry.host` (config/initializers/1_settings.rb), without a port. */
export const DEFAULT_REGISTRY_HOST = 'example.com';

/** Stripe's: a write's answer is kept a day for its Idempotency-Key. */
export const DEFAULT_IDEMPOTENCY_TTL_HOURS = 24;

/** How often the sealer signs a tree head over a log that grew (docs/log-evidence.md). */
export const DEFAULT_LOG_HEAD_INTERVAL_MS = 60_000;

/** GitLab's default `monitoring_whitelist`: the loopback addresses. */
export const DEFAULT_MONITORING_ALLOWLIST = '127.0.0.0/8,::1/128';

/**
 * A problem the operator can fix (configuration, a busy port, an unreachable database, a
 * data directory in use): its message is complete, and `forgelog` prints it as one line
 * on stderr, without a stack trace, and exits non-zero.
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** Which client addresses may read the monitoring endpoints (/-/health, /-/readiness, /-/metrics…). */
export interface AddressAllowlist {
  /** The entries as configured, normalised to CIDR notation. */
  readonly entries: readonly string[];
  allows(address: string | undefined): boolean;
}

export interface Config {
  port: number;
  /** The address the HTTP server binds (FORGELOG_HOST). */
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  rootToken: string | undefined;
  externalUrl: string;
  plan: Plan;
  logLevel: string;
  /** How long `serve` waits on SIGTERM/SIGINT for the requests in flight (milliseconds). */
  shutdownGraceMs: number;
  /** A request body larger than this is refused with 413 before it is read or parsed. */
  maxBodyBytes: number;
  /** FORGELOG_MAX_PUSH_BYTES: the largest `git push` body (src/http/routes/git-receive-pack.ts), which maxBodyBytes does not bound. */
  maxPushBytes: number;
  /**
   * FORGELOG_POLL_INTERVAL_MS: how often the async workers, the sealer and the delivery sender
   * look at the database when nothing woke them and LISTEN is down (with it, every 10 minutes:
   * runtime.ts, idleWait), and how often a worker standing by tries to take a projection over.
   */
  pollIntervalMs: number;
  monitoringAllowlist: AddressAllowlist;
  /** Integrations' outbound delivery: first retry delay, attempts before giving up, per-request timeout. */
  delivery: DeliveryConfig;
  geo: GeoConfig;
  /** The registry's `host[:port]` that container image locations start with (FORGELOG_REGISTRY_HOST). */
  registryHost: string;
  /** The shared secret the registry's notifications carry in `Authorization`; unset: every notification is refused. */
  registryNotificationSecret: string | undefined;
  /** FORGELOG_HEAP_GROWING_PERCENT: how far V8 lets its heap grow past what survived a full GC (src/heap.ts); 0: V8's own choice. */
  heapGrowingPercent: number;
  /** The signed tree heads of the log (docs/log-evidence.md). */
  logHeads: LogHeadsConfig;
  /** FORGELOG_IDEMPOTENCY_TTL_HOURS: how long a write's answer is kept for its `Idempotency-Key` (src/http/kernel/idempotency.ts). */
  idempotencyTtlHours: number;
}

export interface LogHeadsConfig {
  /**
   * FORGELOG_LOG_SIGNING_KEY (PEM) or FORGELOG_LOG_SIGNING_KEY_FILE (a path): the Ed25519
   * private key tree heads are signed with, kept outside the database. Unset: no head is
   * published and /-/log/head answers 404.
   */
  signingKey: KeyObject | undefined;
  /** FORGELOG_LOG_HEAD_INTERVAL_MS: the least time between two published heads. */
  intervalMs: number;
}

export interface DeliveryConfig {
  /** FORGELOG_DELIVERY_BACKOFF_MS: the first retry's delay; each next one doubles it. */
  backoffMs: number;
  /** FORGELOG_DELIVERY_MAX_ATTEMPTS: attempts before a delivery is given up as failed. */
  maxAttempts: number;
  /** FORGELOG_DELIVERY_TIMEOUT_MS: how long one request may take. */
  timeoutMs: number;
}

/** Geo (docs/geo.md): which node this instance is, and for a secondary, its primary. */
export interface GeoConfig {
  /** This instance's node name (GitLab's `geo_node_name`); default the external URL with a slash. */
  nodeName: string;
  /** A read-only secondary following `primaryUrl`. */
  secondary: boolean;
  primaryUrl: string | undefined;
  /** Shared by every node: a node's replication key is derived from it (FORGELOG_GEO_SECRET). */
  secret: string | undefined;
  /** How often a secondary asks its primary for new events when it has caught up. */
  pollIntervalMs: number;
  /** How often a secondary posts its status to its primary. */
  statusIntervalMs: number;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 3000);
  if (env.PORT?.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535) throw new StartupError(`PORT must be a port number (0–65535), got ${JSON.stringify(env.PORT)}`);
  const host = env.FORGELOG_HOST ?? '0.0.0.0';
  if (host === '' || /\s/.test(host)) throw new StartupError(`FORGELOG_HOST must be an address or host name to bind, got ${JSON.stringify(host)}`);
  const plan = (env.FORGELOG_PLAN ?? 'ultimate') as Plan;
  if (!PLANS.includes(plan)) throw new StartupError(`FORGELOG_PLAN must be one of ${PLANS.join(', ')}, got ${JSON.stringify(plan)}`);
  const shutdownGraceMs = Number(env.FORGELOG_SHUTDOWN_GRACE_MS ?? 10_000);
  if (!Number.isInteger(shutdownGraceMs) || shutdownGraceMs < 0) {
    throw new StartupError(`FORGELOG_SHUTDOWN_GRACE_MS must be a whole number of milliseconds, got ${JSON.stringify(env.FORGELOG_SHUTDOWN_GRACE_MS)}`);
  }
  const maxBodyBytes = Number(env.FORGELOG_MAX_BODY_BYTES ?? DEFAULT_MAX_BODY_BYTES);
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) throw new StartupError(`FORGELOG_MAX_BODY_BYTES must be a positive number of bytes, got ${JSON.stringify(env.FORGELOG_MAX_BODY_BYTES)}`);
  const logLevel = env.LOG_LEVEL ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new StartupError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(logLevel)}`);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl) checkDatabaseUrl(databaseUrl);
  const registryHost = env.FORGELOG_REGISTRY_HOST || DEFAULT_REGISTRY_HOST;
  if (/[\s/]/.test(registryHost)) throw new StartupError(`FORGELOG_REGISTRY_HOST must be a host and optional port (registry.example.com:5050), got ${JSON.stringify(registryHost)}`);
  passwordHashCost(env); // read where hashes are made (commands/secrets.ts); checked here, at start
  return {
    port,
    host,
    databaseUrl,
    dataDir: env.FORGELOG_DATA_DIR || './data',
    rootToken: env.FORGELOG_ROOT_TOKEN || undefined,
    externalUrl: (env.FORGELOG_EXTERNAL_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    plan,
    logLevel,
    shutdownGraceMs,
    maxBodyBytes,
    pollIntervalMs: wholeNumber(env, 'FORGELOG_POLL_INTERVAL_MS', DEFAULT_POLL_INTERVAL_MS, 'a whole number of milliseconds'),
    monitoringAllowlist: parseAllowlist(env.FORGELOG_MONITORING_ALLOWLIST ?? DEFAULT_MONITORING_ALLOWLIST),
    delivery: {
      backoffMs: wholeNumber(env, 'FORGELOG_DELIVERY_BACKOFF_MS', 60_000, 'a whole number of milliseconds'),
      maxAttempts: wholeNumber(env, 'FORGELOG_DELIVERY_MAX_ATTEMPTS', 5, 'a whole number of attempts'),
      timeoutMs: wholeNumber(env, 'FORGELOG_DELIVERY_TIMEOUT_MS', 10_000, 'a whole number of milliseconds'),
    },
    geo: loadGeoConfig(env, (env.FORGELOG_EXTERNAL_URL ?? `http://localhost:${port}`).replace(/\/+$/, '')),
    registryHost,
    registryNotificationSecret: env.FORGELOG_REGISTRY_NOTIFICATION_SECRET || undefined,
    heapGrowingPercent: wholeNumber(env, 'FORGELOG_HEAP_GROWING_PERCENT', DEFAULT_HEAP_GROWING_PERCENT, 'a whole number of percent', 0),
    logHeads: { signingKey: logSigningKey(env), intervalMs: wholeNumber(env, 'FORGELOG_LOG_HEAD_INTERVAL_MS', DEFAULT_LOG_HEAD_INTERVAL_MS, 'a whole number of milliseconds') },
    idempotencyTtlHours: wholeNumber(env, 'FORGELOG_IDEMPOTENCY_TTL_HOURS', DEFAULT_IDEMPOTENCY_TTL_HOURS, 'a whole number of hours'),
    maxPushBytes: wholeNumber(env, 'FORGELOG_MAX_PUSH_BYTES', DEFAULT_MAX_PUSH_BYTES, 'a whole number of bytes'),
  };
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, what: string, least = 1): number {
  const raw = env[name];
  const value = Number(raw ?? fallback);
  if (raw?.trim() === '' || !Number.isSafeInteger(value) || value < least) throw new StartupError(`${name} must be ${what}, at least ${least}, got ${JSON.stringify(raw)}`);
  return value;
}

/** FORGELOG_GEO_*: see README.md ("Geo"). `--geo-secondary --primary URL` on `serve` set the last two. */
export function loadGeoConfig(env: NodeJS.ProcessEnv, externalUrl: string): GeoConfig {
  const secondary = env.FORGELOG_GEO_SECONDARY === 'true';
  if (env.FORGELOG_GEO_SECONDARY !== undefined && !['true', 'false'].includes(env.FORGELOG_GEO_SECONDARY)) {
    throw new StartupError(`FORGELOG_GEO_SECONDARY must be true or false, got ${JSON.stringify(env.FORGELOG_GEO_SECONDARY)}`);
  }
  const interval = (name: string, fallback: number) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isInteger(value) || value < 10) throw new StartupError(`${name} must be a whole number of milliseconds (10 or more), got ${JSON.stringify(env[name])}`);
    return value;
  };
  const secret = env.FORGELOG_GEO_SECRET || undefined;
  if (secret !== undefined && secret.length < 32) throw new StartupError('FORGELOG_GEO_SECRET must be at least 32 characters long');
  const geo: GeoConfig = {
    nodeName: env.FORGELOG_GEO_NODE_NAME?.trim() || `${externalUrl}/`,
    secondary,
    primaryUrl: env.FORGELOG_GEO_PRIMARY_URL?.replace(/\/+$/, '') || undefined,
    secret,
    pollIntervalMs: interval('FORGELOG_GEO_POLL_INTERVAL_MS', 1000),
    statusIntervalMs: interval('FORGELOG_GEO_STATUS_INTERVAL_MS', 10_000),
  };
  checkGeoConfig(geo);
  return geo;
}

/** A secondary needs its primary's URL and the shared secret. */
export function checkGeoConfig(geo: GeoConfig): void {
  if (!geo.secondary) return;
  if (!geo.primaryUrl) throw new StartupError('a Geo secondary needs its primary: --primary URL or FORGELOG_GEO_PRIMARY_URL');
  try {
    const url = new URL(geo.primaryUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
  } catch {
    throw new StartupError(`the Geo primary must be an http(s) URL, got ${JSON.stringify(geo.primaryUrl)}`);
  }
  if (!geo.secret) throw new StartupError('a Geo secondary needs FORGELOG_GEO_SECRET, the secret its primary has');
}

/** FORGELOG_LOG_SIGNING_KEY or FORGELOG_LOG_SIGNING_KEY_FILE: an Ed25519 private key in PEM (`forgelog events keygen` makes one). */
function logSigningKey(env: NodeJS.ProcessEnv): KeyObject | undefined {
  const inline = env.FORGELOG_LOG_SIGNING_KEY || undefined;
  const file = env.FORGELOG_LOG_SIGNING_KEY_FILE || undefined;
  if (inline && file) throw new StartupError('set FORGELOG_LOG_SIGNING_KEY or FORGELOG_LOG_SIGNING_KEY_FILE, not both');
  if (!inline && !file) return undefined;
  const name = inline ? 'FORGELOG_LOG_SIGNING_KEY' : 'FORGELOG_LOG_SIGNING_KEY_FILE';
  let pem: string;
  try {
    pem = inline ?? readFileSync(file!, 'utf8');
  } catch (error) {
    throw new StartupError(`${name}: cannot read ${JSON.stringify(file)} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new StartupError(`${name} must be an Ed25519 private key in PEM (forgelog events keygen makes one)`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new StartupError(`${name} must be an Ed25519 private key, got ${key.asymmetricKeyType ?? 'another kind of key'}`);
  return key;
}

/** FORGELOG_PASSWORD_HASH_COST: an integer from 10 to 20 (default 14). */
export function passwordHashCost(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.FORGELOG_PASSWORD_HASH_COST ?? '14';
  const cost = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(cost) || cost < 10 || cost > 20) {
    throw new StartupError(`FORGELOG_PASSWORD_HASH_COST must be an integer from 10 to 20, got ${JSON.stringify(raw)}`);
  }
  return cost;
}

function checkDatabaseUrl(value: string) {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new StartupError('DATABASE_URL must be a URL like postgres://user:password@host:5432/database');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new StartupError(`DATABASE_URL must start with postgres:// or postgresql://, got ${url.protocol}//…`);
  }
}

/** Where DATABASE_URL points, without its credentials (for messages and logs). */
export function describeDatabaseUrl(value: string): string {
  const url = new URL(value);
  return `${url.hostname || 'localhost'}:${url.port || '5432'}${url.pathname === '/' ? '' : url.pathname}`;
}

/**
 * Comma-separated addresses and CIDR ranges, IPv4 or IPv6 ("127.0.0.0/8,::1/128,10.0.0.5").
 * An empty value allows no one. IPv4-mapped IPv6 client addresses (::ffff:127.0.0.1, what a
 * server bound to :: sees) match the IPv4 ranges.
 */
export function parseAllowlist(value: string, variable = 'FORGELOG_MONITORING_ALLOWLIST'): AddressAllowlist {
  const list = new BlockList();
  const entries: string[] = [];
  for (const part of value.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [address = '', prefixText, ...extra] = part.split('/');
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (family === 0 || extra.length > 0 || (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) || prefix > max) {
      throw new StartupError(`${variable} must be comma-separated IP addresses or CIDR ranges (127.0.0.0/8,::1/128), got ${JSON.stringify(part)}`);
    }
    list.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4');
    entries.push(`${address}/${prefix}`);
  }
  return {
    entries,
    allows(address) {
      if (!address) return false;
      const family = isIP(address);
      return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}
