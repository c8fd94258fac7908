import { arrayOf, dateTime, entity, int, nullable, ref, str } from './dsl.js';

export const ContainerRepositoryTag = entity('Entities::ContainerRegistry::Tag.', { name: str, path: str, location: str });

export const ContainerRepository = entity('Entities::ContainerRegistry::Repository (`tags` with `tags=true`).', {
  id: int,
  name: str,
  path: str,
  project_id: int,
  location: str,
  created_at: dateTime,
  tags: arrayOf(ref('ContainerRepositoryTag')),
}, ['tags']);

export const ContainerRepositoryTagDetails = entity('Entities::ContainerRegistry::TagDetails.', {
  name: str,
  path: str,
  location: str,
  revision: nullable(str),
  short_revision: nullable(str),
  digest: nullable(str),
  created_at: nullable(dateTime),
  total_size: nullable(int),
});
