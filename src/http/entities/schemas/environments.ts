import { entity, int, nullable, ref, str, values } from './dsl.js';

export const Environment = entity('Entities::Environment (EnvironmentBasic, its `project`; the list answers `last_deployment` instead).', {
  id: int,
  name: str,
  slug: str,
  external_url: nullable(str),
  project: ref('BasicProjectDetails'),
  last_deployment: { type: 'null' },
  state: values('available', 'stopped'),
}, ['project', 'last_deployment']);
