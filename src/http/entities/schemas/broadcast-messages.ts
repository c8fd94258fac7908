import { bool, dateTime, entity, int, nullable, str } from './dsl.js';

export const BroadcastMessage = entity('Entities::BroadcastMessage.', {
  id: int,
  message: str,
  starts_at: dateTime,
  ends_at: dateTime,
  color: nullable(str),
  font: nullable(str),
  active: bool,
  target_path: nullable(str),
});
