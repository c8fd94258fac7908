import { DEFAULT_FLAGS, EVENT_FLAGS, type KindSpec, type Properties, isSecretField, shownFields } from '../../domain/integrations/catalogue.js';
import { initialProperties } from '../../domain/integrations/decider.js';
import type { IntegrationRow } from '../../projections/integrations/tables.js';

/**
 * Entities::ProjectServiceBasic (GitLab 12): id, title, slug, timestamps, active, the event
 * columns and comment_on_event_enabled. A kind never saved answers as GitLab's
 * find_or_initialize_service builds it: no id nor timestamps, inactive, every flag true.
 */
export function toIntegrationBasic(kind: KindSpec, row: IntegrationRow | undefined) {
  const properties = (row?.properties ?? initialProperties(kind)) as Properties;
  const title = kind.fields.some((f) => f.name === 'title') && typeof properties.title === 'string' && properties.title.trim() !== '' ? properties.title : kind.title;
  const out: Record<string, unknown> = {
    id: row?.id ?? null,
    title,
    slug: kind.slug,
    created_at: row?.created_at ?? null,
    updated_at: row?.updated_at ?? null,
    active: row?.active ?? false,
  };
  for (const flag of EVENT_FLAGS) out[flag] = row ? row[flag] : DEFAULT_FLAGS[flag];
  return out;
}

/**
 * Entities::ProjectService: the basic fields and `properties` — Service#api_field_names, the
 * fields whose names do not say password, token, key, title or description, as far as they
 * are set. `webhook` is sealed like the credentials but shown, as GitLab 12 shows it:
 * `secrets` holds its value opened.
 */
export function toIntegration(kind: KindSpec, row: IntegrationRow | undefined, secrets: Readonly<Record<string, string>>) {
  const properties = (row?.properties ?? initialProperties(kind)) as Properties;
  const shown: Record<string, unknown> = {};
  for (const field of shownFields(kind)) {
    if (isSecretField(field.name)) {
      if (field.name in secrets) shown[field.name] = secrets[field.name];
      else if (row) shown[field.name] = null;
    } else if (field.name in properties) shown[field.name] = properties[field.name];
  }
  return { ...toIntegrationBasic(kind, row), properties: shown };
}
