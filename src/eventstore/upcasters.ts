/**
 * Upcasters turn a stored event of an older schema_version into the current shape, one
 * version step at a time. Stored events are never rewritten; they are upcast on read.
 */
type Upcaster = (data: any) => unknown;

const upcasters = new Map<string, Upcaster>();

export function registerUpcaster(eventType: string, fromVersion: number, upcast: Upcaster): void {
  upcasters.set(`${eventType}@${fromVersion}`, upcast);
}

export function upcast(eventType: string, schemaVersion: number, data: unknown): { schemaVersion: number; data: unknown } {
  let version = schemaVersion;
  let current = data;
  for (let step = upcasters.get(`${eventType}@${version}`); step; step = upcasters.get(`${eventType}@${version}`)) {
    current = step(current);
    version += 1;
  }
  return { schemaVersion: version, data: current };
}
