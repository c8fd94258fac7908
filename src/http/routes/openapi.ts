import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Hono } from 'hono';
import type { RouterRoute } from 'hono/types';
import type { AppEnv } from '../kernel/context.js';
import { documented } from '../kernel/documented.js';
import { openApiDocument } from '../kernel/openapi.js';

/**
 * A forgelog extension: the API's OpenAPI 3.1 document at `GET /api/v4/openapi.json`, public
 * as GitLab's own API documentation is, and a reference page rendering it at `/api/docs`
 * (Swagger UI, served from node_modules: the page loads nothing from elsewhere).
 * The document is made from the app's route table on the first request, then kept.
 */
export function openApiRoutes(routeTable: () => readonly RouterRoute[]) {
  let document: string | undefined;
  const assets = new Map<string, Asset>();
  return (
    new Hono<AppEnv>()
      // Every path answers with a `.json` suffix (the app strips it before routing).
      .get(
        '/api/v4/openapi',
        documented({
          summary: 'The OpenAPI 3.1 document of this API (a forgelog extension)',
          auth: 'public',
          responses: { 200: { type: 'object', description: 'An OpenAPI 3.1 document.' } },
        }),
        (c) => {
          document ??= JSON.stringify(openApiDocument(routeTable()));
          return c.body(document, 200, { 'Content-Type': 'application/json' });
        },
      )
      .get(
        '/api/docs',
        documented({ summary: 'The API reference page (a forgelog extension)', auth: 'public', responses: { 200: { type: 'string', contentMediaType: 'text/html' } } }),
        (c) => c.html(PAGE),
      )
      .get(
        '/api/docs/:file{swagger-ui\\.css|swagger-ui-bundle\\.js|docs\\.js}',
        documented({ summary: "The reference page's scripts and style", auth: 'public', responses: { 200: { type: 'string' }, 404: null } }),
        (c) => {
          const file = c.req.param('file');
          let asset = assets.get(file);
          if (!asset) assets.set(file, (asset = loadAsset(file)));
          c.header('Cache-Control', 'public, max-age=3600');
          return c.body(asset.body, 200, { 'Content-Type': asset.type });
        },
      )
  );
}

interface Asset {
  readonly body: string;
  readonly type: string;
}

const swaggerUi = () => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

function loadAsset(file: string): Asset {
  if (file === 'docs.js') return { body: INITIALIZER, type: 'text/javascript; charset=utf-8' };
  const type = file.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
  return { body: readFileSync(join(swaggerUi(), file), 'utf8'), type };
}

// No validator badge (it would send the document to validator.swagger.io), no request elsewhere.
const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/api/v4/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
};
`;

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>forgelog: GitLab API v4 reference</title>
    <link rel="stylesheet" type="text/css" href="/api/docs/swagger-ui.css">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/api/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="/api/docs/docs.js" charset="UTF-8"></script>
  </body>
</html>
`;
