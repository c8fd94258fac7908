import { dateTime, entity, int, nullable, ref, str, values } from './dsl.js';

const user = nullable(ref('UserBasic'));

export const AwardEmoji = entity('Entities::AwardEmoji.', {
  id: int,
  name: str,
  user,
  created_at: dateTime,
  updated_at: dateTime,
  awardable_id: int,
  awardable_type: values('Issue', 'MergeRequest', 'Note', 'Snippet', 'Epic'),
});
