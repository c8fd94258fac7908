import { EVENT_FLAGS } from '../../../domain/integrations/catalogue.js';
import { bool, dateTime, entity, extend, hash, int, nullable, str } from './dsl.js';

export const ProjectServiceBasic = entity("Entities::ProjectServiceBasic: an integration (id and times null while it was never set).", {
  id: nullable(int),
  title: str,
  slug: str,
  created_at: nullable(dateTime),
  updated_at: nullable(dateTime),
  active: bool,
  ...Object.fromEntries(EVENT_FLAGS.map((flag) => [flag, bool])),
});

export const ProjectService = extend(ProjectServiceBasic, "Entities::ProjectService: an integration and its properties (secrets null).", { properties: hash });
