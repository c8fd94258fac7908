import { loadConfig } from '../../src/config.js';
import { createApp } from '../../src/http/app.js';
import type { AppContext } from '../../src/http/kernel/context.js';

/** Every route the app serves (method and path template, once each): the hostile-input nets take them from the app itself, so a new area is covered without a line. */
export const APP_ROUTES: readonly { readonly method: string; readonly path: string }[] = [
  ...new Map(
    createApp({ config: loadConfig({}) } as unknown as AppContext)
      .routes.filter((route) => route.method !== 'ALL')
      .map((route) => [`${route.method} ${route.path}`, { method: route.method, path: route.path }]),
  ).values(),
];
