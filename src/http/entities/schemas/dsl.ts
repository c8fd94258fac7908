import type { JsonSchema } from '../../kernel/params.js';

/**
 * The words the entity schemas are written in: JSON Schema 2020-12 (OpenAPI 3.1's dialect).
 * An entity is an `entity(…)`: its fields in GitLab's order, every one required (the entity
 * always writes it) unless it is named among the optional ones (written for some callers,
 * views or licences), and no other field (`additionalProperties: false`), so an entity that
 * writes a field its schema does not name fails test/http/openapi-answers.test.ts.
 */

export const int = { type: 'integer' } as const;
export const num = { type: 'number' } as const;
export const str = { type: 'string' } as const;
export const bool = { type: 'boolean' } as const;
/** GitLab's timestamps: ISO 8601 with milliseconds, UTC. */
export const dateTime = { type: 'string', format: 'date-time' } as const;
export const date = { type: 'string', format: 'date' } as const;
/** A hash whose keys are the caller's (a feature flag strategy's parameters, an audit event's details). */
export const hash = { type: 'object' } as const;

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
export const arrayOf = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
/** One of these shapes (a list's labels as titles, or as LabelBasic with `with_labels_details`). */
export const anyOf = (...schemas: JsonSchema[]): JsonSchema => ({ anyOf: schemas });
export const values = (...names: readonly string[]): JsonSchema => ({ type: 'string', enum: names });

/** An issuable's `references`: IssuableReferences' short, relative and full. */
export const references: JsonSchema = object({ short: str, relative: str, full: str });
/** An issuable's `task_completion_status`. */
export const taskCompletionStatus: JsonSchema = object({ count: int, completed_count: int });

/** The schema, or null: `type: [t, 'null']` for a simple type, else `anyOf` with null. */
export function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string' && schema.enum === undefined) return { ...schema, type: [schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

type Properties = Readonly<Record<string, JsonSchema>>;

/** An object of these fields in this order, each required unless named in `optional`, and no other. */
export function object(properties: Properties, optional: readonly string[] = []): JsonSchema {
  for (const name of optional) if (!(name in properties)) throw new Error(`optional field '${name}' is not a field`);
  const required = Object.keys(properties).filter((name) => !optional.includes(name));
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

/** GitLab's `API::Entities::<name>`, described. */
export function entity(description: string, properties: Properties, optional: readonly string[] = []): JsonSchema {
  return { description, ...object(properties, optional) };
}

/** An entity that inherits another's fields (Grape's `class MergeRequest < MergeRequestBasic`), its own after them. */
export function extend(base: JsonSchema, description: string, properties: Properties, optional: readonly string[] = []): JsonSchema {
  const inherited = base.properties as Properties;
  const baseRequired = (base.required as readonly string[] | undefined) ?? [];
  const baseOptional = Object.keys(inherited).filter((name) => !baseRequired.includes(name));
  return entity(description, { ...inherited, ...properties }, [...baseOptional.filter((name) => !(name in properties)), ...optional]);
}
