import type { z } from 'zod';

/**
 * An aggregate's events, written once: a zod schema per event type. The TypeScript union of
 * the events, the list of their types (what projectors handle) and the check every appended
 * or upcast payload passes all come from this one map.
 *
 *   export const memberEvents = {
 *     MemberAdded: z.strictObject({ user_id: z.int(), … }),
 *     MemberRemoved: z.strictObject({ user_id: z.int(), reason: z.enum([…]) }),
 *   } satisfies EventSchemas;
 *   export type MemberEvent = EventOf<typeof memberEvents>;
 */
export type EventSchemas = { readonly [type: string]: z.ZodType };

/** The union `{ type, data }` of the events a schema map defines. */
export type EventOf<S extends EventSchemas> = {
  [T in keyof S & string]: { readonly type: T; readonly data: z.output<S[T]> };
}[keyof S & string];

/** The event types of a schema map, in the map's order. */
export const eventTypesOf = <S extends EventSchemas>(schemas: S) => Object.keys(schemas) as (keyof S & string)[];

/** Columns the feeds filter on, taken from an event when it is appended (a project, a group, a target). */
export interface FeedIndex {
  readonly projectId?: number | null;
  readonly groupId?: number | null;
  readonly targetType?: string | null;
  readonly targetId?: number | null;
}

/**
 * Older shapes of an event type: `{ 1: (v1) => v2, 2: (v2) => v3 }`. Stored events are never
 * rewritten; they are upcast on read, and the result must pass the type's current schema.
 * An event type with n upcasters is appended at schema version n + 1.
 */
export type Upcasters<S extends EventSchemas> = {
  readonly [T in keyof S]?: Readonly<Record<number, (data: any) => unknown>>;
};
