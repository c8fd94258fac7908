/**
 * A Map bounded to `capacity` entries that forgets the least recently used one first: a read
 * or a write makes an entry the most recent (a Map iterates in insertion order, so moving an
 * entry to the end is a delete and a set). The per-process caches use it so that memory does
 * not grow with the number of streams, tokens or users a process has seen.
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`an LRU cache needs a capacity of at least 1, got ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    if (!this.entries.delete(key) && this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, value);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Keys from the least to the most recently used. */
  keys(): IterableIterator<K> {
    return this.entries.keys();
  }
}
