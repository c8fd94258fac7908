import { dateTime, entity, extend, int, nullable, ref, str, values } from './dsl.js';

export const Snippet = entity('Entities::Snippet.', {
  id: int,
  title: str,
  file_name: str,
  description: nullable(str),
  visibility: values('private', 'internal', 'public'),
  author: ref('UserBasic'),
  updated_at: dateTime,
  created_at: dateTime,
  project_id: nullable(int),
  web_url: str,
});

export const ProjectSnippet = extend(Snippet, 'Entities::ProjectSnippet.', {});

export const PersonalSnippet = extend(Snippet, 'Entities::PersonalSnippet.', { raw_url: str });
