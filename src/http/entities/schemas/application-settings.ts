import { ATTRIBUTE_NAMES, attributeDef, type AttributeDef } from '../../../domain/application-settings/attributes.js';
import type { JsonSchema } from '../../kernel/params.js';
import { arrayOf, bool, dateTime, entity, int, nullable, num, str, values } from './dsl.js';

const BY_KIND: Record<AttributeDef['kind'], JsonSchema> = {
  string: nullable(str),
  boolean: bool,
  integer: nullable(int),
  float: nullable(num),
  strings: nullable(arrayOf(str)),
  integers: nullable(arrayOf(int)),
  visibility: values('private', 'internal', 'public'),
};

/** Made from the attributes' own definitions: every shown attribute, the licensed ones optional. */
function applicationSetting(): JsonSchema {
  const properties: Record<string, JsonSchema> = { id: int };
  const optional: string[] = [];
  for (const name of ATTRIBUTE_NAMES) {
    const def = attributeDef(name);
    if (def.hidden) continue;
    properties[name] = BY_KIND[def.kind];
    if (def.feature) optional.push(name);
  }
  properties.commit_email_hostname = str;
  if ('elasticsearch_url' in properties) properties.elasticsearch_url = arrayOf(str);
  Object.assign(properties, {
    created_at: nullable(dateTime),
    updated_at: nullable(dateTime),
    password_authentication_enabled: bool,
    signin_enabled: bool,
    allow_local_requests_from_hooks_and_services: bool,
  });
  return entity("Entities::ApplicationSetting: every attribute an administrator may see, EE's under their licences.", properties, optional);
}

export const ApplicationSetting = applicationSetting();
