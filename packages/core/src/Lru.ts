/**
 * A bounded map that forgets its least recently used entries: the one LRU every cache of ctxlog uses
 * (the service's windows, the snapshot marks, recall's counted texts, the renders' prefix states, …).
 *
 * Recency is insertion order: `set` and `get` move a key to the newest end; `peek` and `has` read
 * without moving it. Past `capacity` entries the oldest leaves. Not synchronized: each holder keeps its
 * own, on one fiber's synchronous path.
 *
 * @since 0.8.0
 */

/** A map of at most `capacity` entries; the least recently set or got leaves first. @since 0.8.0 */
export class Lru<K, V> {
  readonly #entries = new Map<K, V>()
  /** At least one entry is kept whatever is asked. */
  readonly capacity: number
  constructor(capacity: number) {
    this.capacity = Math.max(1, capacity)
  }
  /** The value of `key`, which becomes the most recent. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key)
    if (value !== undefined) {
      this.#entries.delete(key)
      this.#entries.set(key, value)
    }
    return value
  }
  /** The value of `key`, its recency unchanged. */
  peek(key: K): V | undefined {
    return this.#entries.get(key)
  }
  /** Whether `key` is held, its recency unchanged. */
  has(key: K): boolean {
    return this.#entries.has(key)
  }
  /** Hold `value` under `key` as the most recent entry; the oldest leaves past `capacity`. */
  set(key: K, value: V): this {
    this.#entries.delete(key)
    this.#entries.set(key, value)
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next()
      if (oldest.done !== true) this.#entries.delete(oldest.value)
    }
    return this
  }
  /** Forget `key`. */
  delete(key: K): boolean {
    return this.#entries.delete(key)
  }
  /** Forget every entry. */
  clear(): void {
    this.#entries.clear()
  }
  /** How many entries are held. */
  get size(): number {
    return this.#entries.size
  }
}

/** An empty {@link Lru} of `capacity` entries (at least one). @since 0.8.0 */
export const make = <K, V>(capacity: number): Lru<K, V> => new Lru<K, V>(capacity)
