import { date, dateTime, extend, int, nullable } from './dsl.js';
import { UserBasic } from './users.js';

export const Member = extend(UserBasic, 'Entities::Member: the user and their access.', { access_level: int, expires_at: nullable(date) });

export const AccessRequester = extend(UserBasic, 'Entities::AccessRequester.', { created_at: dateTime, requested_at: dateTime });
