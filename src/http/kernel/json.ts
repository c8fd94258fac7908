import type { Context } from 'hono';

/**
 * An answer whose last members are JSON text already, spliced in unparsed: a merge request
 * version's files are stored as the JSON the answer shows (versionFilesQuery), its commits
 * kept as rendered (src/http/routes/merge-requests/versions.ts), and parsing them only to
 * write them again was most of a version read's CPU. The same bytes as
 * `c.json({ ...value, [key]: JSON.parse(json), … })`.
 */
export function jsonWithMembers(c: Context, value: Record<string, unknown>, members: readonly (readonly [key: string, json: string])[]): Response {
  let text = JSON.stringify(value).slice(0, -1);
  for (const [key, json] of members) text += `${text === '{' ? '' : ','}${JSON.stringify(key)}:${json}`;
  return c.body(`${text}}`, 200, { 'Content-Type': 'application/json' });
}
