import { todoDecider, todoEvents, todoStreamId } from '../domain/todos.js';
import { defineAggregate } from './aggregate.js';

/** A user's todos (src/domain/todos.ts): keyed by the user's id. */
export const todos = defineAggregate({
  name: 'todos',
  streamId: todoStreamId,
  events: todoEvents,
  decider: todoDecider,
});
