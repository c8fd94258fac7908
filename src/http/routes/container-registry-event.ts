import { createHash, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import { z } from 'zod';
import { receiveRegistryEvents, type RegistryEvent } from '../../commands/container-repositories.js';
import { writerFor } from '../kernel/auth.js';
import { appContext, NOBODY, type AppEnv } from '../kernel/context.js';
import { unauthorized, unsupportedMediaType } from '../kernel/errors.js';
import { declaration, rawParams, required, type Shape } from '../kernel/params.js';
import { documented } from '../kernel/documented.js';
import { header } from '../kernel/request.js';

/**
 * GitLab's API::ContainerRegistryEvent (12.10): the Docker registry's notifications
 * (`POST /container_registry_event/events`), authenticated by the shared secret the registry
 * sends as `Authorization` (FORGELOG_REGISTRY_NOTIFICATION_SECRET). GitLab compares it with
 * Devise.secure_compare, which refuses a blank secret: unset, every request is 401.
 */

export const DOCKER_DISTRIBUTION_EVENTS_V1_JSON = 'application/vnd.docker.distribution.events.v1+json';
/**
 * `content_type :json, DOCKER_DISTRIBUTION_EVENTS_V1_JSON` beside the API's JSON (both read as
 * JSON by the kernel's parameters, before routing); forms as Rack reads them.
 */
const ACCEPTED_TYPES = ['application/json', DOCKER_DISTRIBUTION_EVENTS_V1_JSON, 'application/x-www-form-urlencoded', 'multipart/form-data'];
/** GitLab 12.10: `requires :events, type: Array`; each event is read as far as it goes. */
const envelopeShape = { events: required(z.array(z.unknown())) } satisfies Shape;

/** Constant time whatever the lengths: both sides are hashed to the same length first. */
function sameSecret(secret: string | undefined, presented: string | undefined): boolean {
  if (!secret || !presented) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(secret), digest(presented));
}

const text = (value: unknown) => (typeof value === 'string' ? value : null);
const size = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null);
const record = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/** One envelope entry, read leniently: what is not there, or not of its type, is null. */
function registryEvent(value: unknown): RegistryEvent {
  const event = record(value);
  const target = record(event.target);
  const references = Array.isArray(target.references) ? target.references.map(record) : [];
  return {
    id: text(event.id),
    action: text(event.action) ?? '',
    timestamp: text(event.timestamp),
    target: {
      repository: text(target.repository),
      tag: text(target.tag),
      digest: text(target.digest),
      size: size(target.size),
      references: references.map((ref) => ({ mediaType: text(ref.mediaType), digest: text(ref.digest), size: size(ref.size) })),
    },
  };
}

/** The registry authenticates with the notification secret as its Authorization header, none of the API's schemes. */
const EVENTS_DOC = {
  summary: 'Receives notifications from the container registry when an operation occurs',
  params: envelopeShape,
  auth: 'public',
  responses: { 200: { type: 'integer', const: 200 }, 401: 'Error', 415: 'Error' },
} as const;

export const containerRegistryEventRoutes = new Hono<AppEnv>().post('/container_registry_event/events', documented(EVENTS_DOC), async (c) => {
  const { config, logger } = appContext(c);
  if (!sameSecret(config.registryNotificationSecret, header(c, 'authorization'))) throw unauthorized();
  const type = header(c, 'content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type && !ACCEPTED_TYPES.includes(type)) throw unsupportedMediaType(type);
  const p = declaration(await rawParams(c));
  const { events } = p.parse(envelopeShape);
  p.done();
  const skipped = await receiveRegistryEvents(writerFor(c, NOBODY), events.map(registryEvent));
  for (const { id, action, repository, tag, reason } of skipped) {
    logger.warn({ request_id: c.var.requestId, registry_event_id: id, action, repository, tag, reason }, 'container registry event skipped');
  }
  // `status :ok` as the endpoint's last value: the status is the body.
  return c.json(200, 200);
});
