/** The GitLab release whose API forgelog speaks, and forgelog's own build. */
export const VERSION = '12.10.14-forgelog';
export const REVISION = process.env.FORGELOG_REVISION ?? 'forgelog-0.1.0';
