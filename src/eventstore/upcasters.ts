/**
 * What the log knows of each event type: the upcasters that turn a stored event of an older
 * schema_version into the current shape, one version step at a time, and the check the
 * result must pass. Stored events are never rewritten; they are upcast on read. The
 * composition root registers every aggregate's types before anything reads the log
 * (installEventTypes, src/commands/kernel/aggregates.ts).
 */
type Upcaster = (data: any) => unknown;

export interface EventTypeDefinition {
  /** `upcasters[v]` turns version v's data into version v + 1's. */
  readonly upcasters?: Readonly<Record<number, Upcaster>>;
  /** Throws when data does not have the current shape. */
  readonly validate: (data: unknown) => void;
}

const eventTypes = new Map<string, EventTypeDefinition>();

export function registerEventType(type: string, definition: EventTypeDefinition): void {
  eventTypes.set(type, definition);
}

/** The schema version an event type is appended at: one past its last upcaster. */
export function currentSchemaVersion(type: string): number {
  const upcasters = eventTypes.get(type)?.upcasters;
  return upcasters ? Object.keys(upcasters).length + 1 : 1;
}

export function upcast(eventType: string, schemaVersion: number, data: unknown): { schemaVersion: number; data: unknown } {
  const definition = eventTypes.get(eventType);
  const upcasters = definition?.upcasters;
  if (!upcasters) return { schemaVersion, data };
  let version = schemaVersion;
  let current = data;
  for (let step = upcasters[version]; step; step = upcasters[version]) {
    current = step(current);
    version += 1;
  }
  if (version !== schemaVersion) {
    try {
      definition.validate(current);
    } catch (error) {
      throw new Error(`${eventType} upcast from schema version ${schemaVersion} to ${version} does not match its schema`, { cause: error });
    }
  }
  return { schemaVersion: version, data: current };
}
