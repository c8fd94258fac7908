import type { Context } from 'hono';
import { z } from 'zod';
import { DomainError, paramErrors } from '../../domain/errors.js';
import { refNameFits } from '../../domain/repository/decider.js';
import { ApiError } from './errors.js';
import { header } from './request.js';

/**
 * Request parameters the way Grape sees them: query string, JSON body and form bodies
 * merged (body over query), `name[]=v` arrays and `name[key]=v` hashes. Undeclared
 * parameters are ignored by the route's declaration, as GitLab does.
 */
export type RawParams = Record<string, unknown>;

const RAW_PARAMS = 'rawParams';

/**
 * Keys never taken from the wire (query, form, multipart, JSON): assigning them would reach
 * an object's prototype. Parameter containers have no prototype either.
 */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** GitLab's JSON limits (Gitlab::Middleware::JsonValidation): nesting and entries in one array or object. */
export const JSON_MAX_DEPTH = 32;
export const JSON_MAX_ENTRIES = 50_000;

/**
 * A NUL character or a lone UTF-16 surrogate in a parameter: nothing PostgreSQL can store.
 * The request guard answers it as GitLab's HandleNullBytes does.
 */
export class MalformedString extends Error {
  constructor() {
    super('malformed string in the request');
  }
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function checkString(value: string) {
  if (value.includes('\u0000') || LONE_SURROGATE.test(value)) throw new MalformedString();
}

/** Grape's InvalidMessageBody, as GitLab answers a body that is not the format it claims to be. */
const invalidBody = (type: string) =>
  new ApiError(400, {
    error: `\nProblem:\n  message body does not match declared format\nResolution:\n  when specifying ${type} as content-type, you must pass valid ${type} in the request's 'body' `,
  });

/**
 * Media types whose body is JSON: the API's, SCIM's (`content_type :json,
 * 'application/scim+json'`) and the Docker registry's notification envelope, which GitLab's
 * ContainerRegistryEvent endpoint declares as JSON (`content_type :json, …`).
 */
const JSON_MEDIA_TYPES = new Set(['application/json', 'application/scim+json', 'application/vnd.docker.distribution.events.v1+json']);

const tooLarge = (container: 'Array' | 'Hash') => new ApiError(400, { error: `${container} parameter too large` });

/**
 * The request's parameters, parsed once. Throws a 400 ApiError for a body that does not
 * parse or breaks the JSON limits, and MalformedString for a value PostgreSQL cannot store.
 */
export async function rawParams(c: Context): Promise<RawParams> {
  const cached = c.get(RAW_PARAMS as never) as RawParams | undefined;
  if (cached) return cached;
  const params: RawParams = Object.create(null);
  const url = c.req.url;
  const query = url.indexOf('?');
  if (query !== -1) for (const [key, value] of new URLSearchParams(url.slice(query + 1))) assign(params, key, value);
  const type = header(c, 'content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
    if (JSON_MEDIA_TYPES.has(type)) {
      const text = await c.req.text();
      if (text.trim() !== '') {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          throw invalidBody(type);
        }
        inspectJson(body, 1);
        if (body && typeof body === 'object' && !Array.isArray(body)) {
          for (const key of Object.keys(body)) params[key] = (body as Record<string, unknown>)[key];
        }
      }
    } else if (type === 'application/x-www-form-urlencoded') {
      const pairs = formPairs(await c.req.text());
      if (!pairs) throw invalidBody(type);
      for (const [key, value] of pairs) assign(params, key, value);
    } else if (type === 'multipart/form-data') {
      let form: FormData;
      try {
        form = await c.req.formData();
      } catch {
        throw invalidBody(type);
      }
      for (const [key, value] of form) assign(params, key, value);
    }
  }
  if (Object.keys(params).length > JSON_MAX_ENTRIES) throw tooLarge('Hash');
  c.set(RAW_PARAMS as never, params as never);
  if (recording || watcher) requests.set(params, c);
  return params;
}

/** An urlencoded body as Rack reads it; undefined when a `%` escape is not valid UTF-8 (Rack's InvalidParameterError). */
function formPairs(text: string): [string, string][] | undefined {
  const pairs: [string, string][] = [];
  for (const part of text.split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const [key, value] = equals === -1 ? [part, ''] : [part.slice(0, equals), part.slice(equals + 1)];
    try {
      pairs.push([decodeURIComponent(key.replace(/\+/g, ' ')), decodeURIComponent(value.replace(/\+/g, ' '))]);
    } catch {
      return undefined;
    }
  }
  return pairs;
}

/**
 * Checks a parsed JSON body against GitLab's limits and for strings PostgreSQL cannot
 * store, and drops prototype keys (JSON.parse makes `__proto__` an own property).
 */
function inspectJson(value: unknown, depth: number): void {
  if (typeof value === 'string') return checkString(value);
  if (value === null || typeof value !== 'object') return;
  if (depth > JSON_MAX_DEPTH) throw new ApiError(400, { error: 'Parameters nested too deeply' });
  if (Array.isArray(value)) {
    if (value.length > JSON_MAX_ENTRIES) throw tooLarge('Array');
    for (const item of value) inspectJson(item, depth + 1);
    return;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  if (keys.length > JSON_MAX_ENTRIES) throw tooLarge('Hash');
  for (const key of keys) {
    if (FORBIDDEN_KEYS.has(key)) {
      delete object[key];
      continue;
    }
    checkString(key);
    inspectJson(object[key], depth + 1);
  }
}

/** The hash `params[name]` holds, made when it holds none (undefined for a forbidden name). */
function hashIn(params: RawParams, name: string): Record<string, unknown> | undefined {
  if (FORBIDDEN_KEYS.has(name)) return undefined;
  const current = params[name];
  if (current && typeof current === 'object' && !Array.isArray(current) && !(current instanceof Blob)) return current as Record<string, unknown>;
  const object = Object.create(null) as Record<string, unknown>;
  params[name] = object;
  return object;
}

const HASH_KEY = /^([^[\]]+)\[([^[\]]+)\]$/;

/** Rack's parameter syntax: `name[]=v` appends to an array, `name[key]=v` sets a hash entry, `name[key][]=v` appends to an array in a hash. */
function assign(params: RawParams, key: string, value: unknown) {
  checkString(key);
  if (typeof value === 'string') checkString(value);
  const array = /^(.+)\[\]$/.exec(key);
  if (array) {
    const nested = HASH_KEY.exec(array[1]!);
    const name = nested ? nested[2]! : array[1]!;
    if (FORBIDDEN_KEYS.has(name)) return;
    const target = nested ? hashIn(params, nested[1]!) : params;
    if (!target) return;
    const current = target[name];
    if (!Array.isArray(current)) target[name] = [value];
    else if (current.length < JSON_MAX_ENTRIES) current.push(value);
    else throw tooLarge('Array');
    return;
  }
  const hash = HASH_KEY.exec(key);
  if (hash) {
    if (FORBIDDEN_KEYS.has(hash[2]!)) return;
    const object = hashIn(params, hash[1]!);
    if (object) object[hash[2]!] = value;
    return;
  }
  if (FORBIDDEN_KEYS.has(key)) return;
  params[key] = value;
}

// ───────────────────────────── Parameter types ─────────────────────────────

const TRUE = new Set(['true', 't', '1', 'yes', 'y', 'on']);
const FALSE = new Set(['false', 'f', '0', 'no', 'n', 'off']);
/** PostgreSQL's integer: ids past it name nothing. */
export const INT4_MAX = 2147483647;

/** How Grape reads an Integer from a string: digits, an optional minus, spaces around. */
export const INTEGER_TEXT = /^\s*-?\d+\s*$/;
const intString = (v: unknown) => (typeof v === 'string' && INTEGER_TEXT.test(v) ? Number(v) : v);
const stringOf = (v: unknown) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v);

const STRING = z.preprocess(stringOf, z.string());
/** A ref name or a pattern of them (a protected branch): no longer than git keeps one (refNameFits). */
const REF = z.preprocess(stringOf, z.string().refine(refNameFits));
const INTEGER = z.preprocess(intString, z.number().int().min(-INT4_MAX).max(INT4_MAX));
const BOOLEAN = z.preprocess((v) => {
  if (typeof v === 'string') {
    const s = v.toLowerCase();
    if (TRUE.has(s)) return true;
    if (FALSE.has(s)) return false;
  }
  return v;
}, z.boolean());
/** Years PostgreSQL's date and timestamptz store, and Ruby's Date parses as written. */
const inYearRange = (date: Date) => date.getUTCFullYear() >= 1 && date.getUTCFullYear() <= 9999;
/** `YYYY-MM-DD` at the start of a string names a day of the calendar (no 2024-02-30, no year 0). */
function calendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (!match) return true;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
const DATETIME = z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  const date = new Date(v);
  return Number.isNaN(date.getTime()) || !inYearRange(date) || !calendarDate(v.trim()) ? v : date;
}, z.date());
const DATE = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .refine(calendarDate);
/** A date sent as a String, as Rails casts it onto a date column ('' is none); forgelog refuses what is not a date. */
const DATE_TEXT = /^(\d{4}-\d{2}-\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const DATE_COLUMN = z.preprocess(
  (v) => (typeof v === 'string' ? v.trim() : v),
  z.string().refine((v) => v === '' || (DATE_TEXT.test(v) && !Number.isNaN(Date.parse(`${DATE_TEXT.exec(v)![1]}T00:00:00Z`)))).transform((v) => (v === '' ? null : v.slice(0, 10))),
);

const HASH = z.record(z.string(), z.preprocess(stringOf, z.string()));
/** Grape's `type: File`: a multipart file part; anything else is "<param> is invalid". */
const FILE = z.custom<File>((value) => value instanceof File);

// ─────────────── What each type is in JSON Schema (the OpenAPI document) ───────────────

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it) fragment. */
export type JsonSchema = { readonly [key: string]: unknown };

/** Each type's JSON Schema, kept beside the zod schema that parses it. */
const jsonSchemas = new WeakMap<z.ZodType, JsonSchema>();
function described<T extends z.ZodType>(schema: T, json: JsonSchema): T {
  jsonSchemas.set(schema, json);
  return schema;
}
described(STRING, { type: 'string' });
described(REF, { type: 'string', maxLength: 1024, description: 'A ref name: at most 255 bytes a component, 1,024 in all.' });
described(INTEGER, { type: 'integer', minimum: -INT4_MAX, maximum: INT4_MAX });
described(BOOLEAN, { type: 'boolean' });
described(DATETIME, { type: 'string', format: 'date-time' });
described(DATE, { type: 'string', format: 'date' });
described(DATE_COLUMN, { anyOf: [{ type: 'string', format: 'date' }, { const: '' }], description: "A date; '' clears it." });
described(HASH, { type: 'object', additionalProperties: { type: 'string' } });
described(FILE, { type: 'string', contentMediaType: 'application/octet-stream' });

/** The JSON Schema of a parameter type; a schema made outside `t` is described by zod as far as it can. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const known = jsonSchemas.get(schema);
  if (known) return known;
  // A route's own coercion in front of a type of ours (`z.preprocess(…, t.datetime().optional())`): the type's.
  const def = schema._zod.def as { type: string; out?: z.ZodType; innerType?: z.ZodType };
  if (def.type === 'pipe' && def.out) return jsonSchemaOf(def.out);
  if ((def.type === 'optional' || def.type === 'nullable') && def.innerType) return jsonSchemaOf(def.innerType);
  try {
    const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    return json;
  } catch {
    return {};
  }
}

/** One declared parameter in JSON Schema: its type, its default, and what allow_blank: false refuses. */
export function paramJsonSchema(def: ParamDef<unknown, boolean>): JsonSchema {
  const json: Record<string, unknown> = { ...jsonSchemaOf(def.schema) };
  if (def.notBlank && json.type === 'string') json.minLength = 1;
  if (def.notBlank && json.type === 'array') json.minItems = 1;
  if (def.default !== undefined) json.default = def.default instanceof Date ? def.default.toISOString() : def.default;
  return json;
}

/** Built once per distinct argument: routes declare their parameters on every request. */
function memo<K, V>(build: (key: K) => V, keyOf: (key: K) => string): (key: K) => V {
  const built = new Map<string, V>();
  return (key) => {
    const k = keyOf(key);
    let value = built.get(k);
    if (value === undefined) built.set(k, (value = build(key)));
    return value;
  };
}
const valuesKey = (values: readonly unknown[]) => values.join('\u0000');
const valuesOf = memo(
  (values: readonly [string, ...string[]]) => described(z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.enum(values)), { type: 'string', enum: values }),
  valuesKey,
);
const integerValuesOf = memo(
  (values: readonly [number, ...number[]]) =>
    described(z.preprocess(intString, z.number().refine((n) => values.includes(n), { params: { values: true } })), { type: 'integer', enum: values }),
  valuesKey,
);
const arrays = new WeakMap<z.ZodType, z.ZodType>();
function arrayOf(item: z.ZodType): z.ZodType {
  let schema = arrays.get(item);
  if (!schema) {
    schema = z.preprocess((v) => (v === undefined || Array.isArray(v) ? v : typeof v === 'string' && v.includes(',') ? v.split(',') : [v]), z.array(item));
    described(schema, { type: 'array', items: jsonSchemaOf(item) });
    arrays.set(item, schema);
  }
  return schema;
}

/**
 * Zod schemas that coerce the way Grape does. A failed value is "<param> is invalid".
 * Schemas are immutable, so each is built once and shared (building one costs more than
 * parsing with it).
 */
export const t = {
  string: () => STRING,
  /** A ref name (or pattern) that lands in an indexed column: "<param> is invalid" past 255 bytes a component or 1,024 in all. */
  ref: () => REF,
  integer: () => INTEGER,
  boolean: () => BOOLEAN,
  /** A value out of a fixed set: "<param> does not have a valid value". */
  values: <const V extends readonly [string, ...string[]]>(values: V) => valuesOf(values) as unknown as z.ZodType<V[number]>,
  integerValues: <const V extends readonly [number, ...number[]]>(values: V) => integerValuesOf(values) as unknown as z.ZodType<V[number]>,
  array: <T extends z.ZodType>(item: T) => arrayOf(item) as unknown as z.ZodType<z.output<T>[]>,
  datetime: () => DATETIME,
  date: () => DATE,
  /** A date column's value: 'YYYY-MM-DD', or null for '' (none). */
  dateColumn: () => DATE_COLUMN,
  hash: () => HASH,
  file: () => FILE,
};

// ───────────────────────────── Declarations ─────────────────────────────

export interface ParamDef<T, R extends boolean> {
  readonly schema: z.ZodType<T>;
  readonly required: R;
  /** Grape's allow_blank: false — an empty value is "<param> is empty". */
  readonly notBlank?: boolean;
  readonly default?: T;
}

export const required = <T>(schema: z.ZodType<T>, options: { notBlank?: boolean } = {}): ParamDef<T, true> => ({ schema, required: true, ...options });
export const optional = <T>(schema: z.ZodType<T>, options: { notBlank?: boolean } = {}): ParamDef<T, false> => ({ schema, required: false, ...options });
/** Optional with a default value when absent. */
export const withDefault = <T>(schema: z.ZodType<T>, value: T): ParamDef<T, true> => ({ schema, required: false as unknown as true, default: value });

export type Shape = Record<string, ParamDef<any, boolean>>;
export type Parsed<S extends Shape> = {
  [K in keyof S]: S[K] extends ParamDef<infer T, true> ? T : S[K] extends ParamDef<infer T, false> ? T | undefined : never;
};

export interface Rules {
  /** Grape's mutually_exclusive: the parameters, or the parameters and the declaration's `message:`. */
  readonly mutuallyExclusive?: readonly (readonly string[] | { readonly params: readonly string[]; readonly message: string })[];
  /** Grape's at_least_one_of. */
  readonly atLeastOneOf?: readonly (readonly string[])[];
  /** Grape's exactly_one_of. */
  readonly exactlyOneOf?: readonly (readonly string[])[];
}

const present = (v: unknown) => v !== undefined && v !== null;

// ───────────────────────────── What routes declare ─────────────────────────────

/** What a declared parameter takes, as far as the hostile-input net needs to know. */
export interface DeclaredParam {
  readonly kind: 'string' | 'strings' | 'other';
  readonly required: boolean;
}

/** Route (`METHOD /api/v4/path/:id`) → the parameters it declared, while recording is on. */
export type DeclaredParams = Map<string, Map<string, DeclaredParam>>;

let recording: DeclaredParams | undefined;
/** The request each parameter container came from, while recording is on (to name its route). */
const requests = new WeakMap<RawParams, Context>();

/**
 * Starts recording, per matched route, the names every declaration parses (and keeps what
 * was recorded so far): the hostile-input net learns each route's parameters from the routes
 * themselves. Off (the default), a declaration costs one comparison more.
 */
export function recordDeclaredParams(): DeclaredParams {
  recording ??= new Map();
  return recording;
}

function kindOf(schema: z.ZodType): DeclaredParam['kind'] {
  if (schema === STRING || schema === REF) return 'string';
  return schema === arrays.get(STRING) ? 'strings' : 'other';
}

function record(shape: Shape, raw: RawParams) {
  const c = requests.get(raw);
  if (!c || !recording) return;
  const route = `${c.req.method} ${c.req.routePath}`;
  let names = recording.get(route);
  if (!names) recording.set(route, (names = new Map()));
  for (const [name, def] of Object.entries(shape)) names.set(name, { kind: kindOf(def.schema), required: def.required && def.default === undefined });
}

/** What a request's declarations parse, for a check that they are what its route documents. */
export interface DeclarationWatcher {
  shape(c: Context, shape: Shape): void;
  pathId(c: Context, name: string): void;
}

let watcher: DeclarationWatcher | undefined;

/**
 * Hands every shape and path integer a request's declarations parse to `watch` (the test
 * servers check them against the route's documentation: src/http/kernel/documented.ts).
 * Off (the default), a declaration costs one comparison more.
 */
export function watchDeclarations(watch: DeclarationWatcher | undefined) {
  watcher = watch;
}

/** Validates raw parameters against a declaration; errors are Grape's, joined with ", ". */
export function parseParams<S extends Shape>(shape: S, raw: RawParams, rules: Rules = {}): Parsed<S> {
  if (recording) record(shape, raw);
  if (watcher) {
    const c = requests.get(raw);
    if (c) watcher.shape(c, shape);
  }
  const errors: string[] = [];
  const result: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(shape)) {
    const value = raw[name];
    if (!present(value)) {
      if (def.required && def.default === undefined) errors.push(`${name} is missing`);
      else if (def.default !== undefined) result[name] = def.default;
      continue;
    }
    if (def.notBlank && (value === '' || (Array.isArray(value) && value.length === 0))) {
      errors.push(`${name} is empty`);
      continue;
    }
    const parsed = def.schema.safeParse(value);
    if (parsed.success) result[name] = parsed.data;
    else errors.push(`${name} ${isValuesIssue(parsed.error) ? 'does not have a valid value' : 'is invalid'}`);
  }
  for (const rule of rules.mutuallyExclusive ?? []) {
    const [group, message] = 'params' in rule ? [rule.params, rule.message] : [rule, 'are mutually exclusive'];
    if (group.filter((n) => present(raw[n])).length > 1) errors.push(`${group.join(', ')} ${message}`);
  }
  for (const group of rules.atLeastOneOf ?? []) {
    const error = atLeastOneOf(raw, group);
    if (error) errors.push(error);
  }
  for (const group of rules.exactlyOneOf ?? []) {
    const count = group.filter((n) => present(raw[n])).length;
    if (count === 0) errors.push(`${group.join(', ')} are missing, exactly one parameter must be provided`);
    else if (count > 1) errors.push(`${group.join(', ')} are mutually exclusive`);
  }
  if (errors.length > 0) throw paramErrors(errors);
  return result as Parsed<S>;
}

function isValuesIssue(error: z.ZodError): boolean {
  return error.issues.some(
    (issue) => issue.code === 'invalid_value' || (issue.code === 'custom' && (issue.params as { values?: boolean } | undefined)?.values === true),
  );
}

/** Parses the request's parameters against a declaration. */
export async function params<S extends Shape>(c: Context, shape: S, rules?: Rules): Promise<Parsed<S>> {
  return parseParams(shape, await rawParams(c), rules);
}

// ───────────────────────────── Ordered declarations ─────────────────────────────

/**
 * Grape validates declarations in the order they are written, rules (at_least_one_of,
 * all_or_none_of) included, and reports every failure joined with ", ". This collects the
 * parts of one declaration in that order.
 */
export function declaration(raw: RawParams) {
  const errors: string[] = [];
  return {
    parse<S extends Shape>(shape: S, rules?: Rules): Parsed<S> {
      try {
        return parseParams(shape, raw, rules);
      } catch (error) {
        if (error instanceof DomainError && error.code === 'invalid_params') {
          errors.push(...(error.params ?? []));
          return {} as Parsed<S>;
        }
        throw error;
      }
    },
    check(message: string | undefined) {
      if (message) errors.push(message);
    },
    done() {
      if (errors.length > 0) throw paramErrors(errors);
    },
  };
}

export const atLeastOneOf = (raw: RawParams, names: readonly string[]) =>
  names.some((name) => present(raw[name])) ? undefined : `${names.join(', ')} are missing, at least one parameter must be provided`;

export function allOrNoneOf(raw: RawParams, names: readonly string[]) {
  const count = names.filter((name) => present(raw[name])).length;
  return count > 0 && count < names.length ? `${names.join(', ')} provide all or none of parameters` : undefined;
}

/** What a route declares beyond its parameters' shape (`declared`). */
export interface Declaration {
  /** Path integers the route requires (`requires :environment_id, type: Integer`), checked first. */
  readonly pathIds?: readonly string[];
  readonly rules?: Rules;
  /** Checks of the raw parameters after the shape's (`absence`, a group's at_least_one_of…), in order. */
  readonly checks?: readonly ((raw: RawParams) => string | undefined)[];
}

/**
 * Grape's declaration of a route: its path integers, its parameters and rules, then its
 * checks, every failure reported together in that order (`{"error":"environment_id is
 * invalid, name is missing"}`).
 */
export async function declared<S extends Shape>(c: Context, shape: S, options: Declaration = {}): Promise<Parsed<S>> {
  const raw = await rawParams(c);
  const p = declaration(raw);
  for (const name of options.pathIds ?? []) p.check(integerCheck(c, name));
  const parsed = p.parse(shape, options.rules);
  for (const check of options.checks ?? []) p.check(check(raw));
  p.done();
  return parsed;
}

/** A path integer declared `requires :x, type: Integer` (not a route requirement): "x is invalid". */
export function integerCheck(c: Context, name: string): string | undefined {
  if (watcher) watcher.pathId(c, name);
  return INTEGER_TEXT.test(c.req.param(name) ?? '') ? undefined : `${name} is invalid`;
}

/**
 * The value of a path integer `integerCheck` passed, or null when no row can have it (past
 * PostgreSQL's integer, or below 1): the route answers its `find`'s 404 then.
 */
export function pathId(c: Context, name: string): number | null {
  const id = Number((c.req.param(name) ?? '').trim());
  return Number.isSafeInteger(id) && id >= 1 && id <= INT4_MAX ? id : null;
}
