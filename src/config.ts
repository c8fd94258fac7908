/** Runtime configuration, read once from the environment (every variable is documented in README.md). */
export const PLANS = ['free', 'starter', 'premium', 'ultimate'] as const;
export type Plan = (typeof PLANS)[number];

/** 10 MiB: GitLab's default attachment limit; no API v4 body here comes near it. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

export interface Config {
  port: number;
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
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got ${env.PORT}`);
  const plan = (env.FORGELOG_PLAN ?? 'ultimate') as Plan;
  if (!PLANS.includes(plan)) throw new Error(`FORGELOG_PLAN must be one of ${PLANS.join(', ')}, got ${plan}`);
  const shutdownGraceMs = Number(env.FORGELOG_SHUTDOWN_GRACE_MS ?? 10_000);
  if (!Number.isInteger(shutdownGraceMs) || shutdownGraceMs < 0) {
    throw new Error(`FORGELOG_SHUTDOWN_GRACE_MS must be a whole number of milliseconds, got ${env.FORGELOG_SHUTDOWN_GRACE_MS}`);
  }
  const maxBodyBytes = Number(env.FORGELOG_MAX_BODY_BYTES ?? DEFAULT_MAX_BODY_BYTES);
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) throw new Error(`FORGELOG_MAX_BODY_BYTES must be a positive number of bytes, got ${env.FORGELOG_MAX_BODY_BYTES}`);
  return {
    port,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.FORGELOG_DATA_DIR ?? './data',
    rootToken: env.FORGELOG_ROOT_TOKEN || undefined,
    externalUrl: (env.FORGELOG_EXTERNAL_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    plan,
    logLevel: env.LOG_LEVEL ?? 'info',
    shutdownGraceMs,
    maxBodyBytes,
  };
}
