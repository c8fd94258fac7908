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

/**
 * An LruMap bounded by the total weight of its values (an estimate of their bytes) rather than
 * their number, for values whose sizes differ by orders of magnitude: the least recently used
 * go first until a new one fits; a value heavier than the whole bound is not kept.
 */
export class WeightedLruMap<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private total = 0;

  constructor(readonly maxWeight: number) {
    if (!(maxWeight > 0)) throw new Error(`a weighted LRU cache needs a positive bound, got ${maxWeight}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V, weight: number): void {
    this.delete(key);
    if (weight > this.maxWeight) return;
    for (const [oldest, entry] of this.entries) {
      if (this.total + weight <= this.maxWeight) break;
      this.entries.delete(oldest);
      this.total -= entry.weight;
    }
    this.entries.set(key, { value, weight });
    this.total += weight;
  }

  delete(key: K): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    this.entries.delete(key);
    this.total -= entry.weight;
    return true;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }
}
