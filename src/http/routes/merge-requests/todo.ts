import { todoRoutes } from '../issuables/todo.js';
import { MERGE_REQUEST_KIND } from './find.js';

/** API::Todos for a merge request (one implementation with issues'). */
export const mergeRequestTodoRoutes = todoRoutes(MERGE_REQUEST_KIND);
