/**
 * The cache layer: the one place ctxlog keeps process-wide memos and bounded caches (ADR 0162).
 *
 * The renders, the fold, the token counts and the tool-pair checks are pure synchronous functions that
 * remember what they computed (a message's JSON text, a window's fold state, a render's hashed prefix).
 * Each such cache is declared here by name, once, where its module loads:
 *
 * - {@link weak}: a weak memo (a `WeakMap` from an immutable object to what a pure function computes from it);
 * - {@link lru}: a bounded LRU ({@link Lru}, the one LRU);
 * - {@link slot}: one value made on first use (a constant that is costly to make, or a memo with its own state).
 *
 * The handle a module keeps is not the cache: it finds the cache of the set its caller sees. Without a
 * layer that is the process's set, made when the module loads; {@link layer} gives everything run with
 * it a fresh set, cleared when the layer's scope closes (a test that wants cold caches, a long-running
 * server that drops them with a scope). {@link list} names every cache with its kind, capacity and size;
 * {@link clear} empties them.
 *
 * A cache is invisible but for the work it saves: every reader checks what it finds (by identity, or by
 * a key that is the whole input) or recomputes, so a fresh or cleared set gives the same answers. The
 * lookup is O(1): while no scoped set is open anywhere (the common case) a handle reads the process's
 * cache directly; while one is, it reads the calling fiber's set from a `FiberRef` (code outside any
 * fiber sees the process's set).
 *
 * `pnpm module-state` fails any module-level `new Map`, `new WeakMap`, `Lru.make` or `let` in
 * `packages/*\/src` outside this module and a short allow-list of constants: a cache is declared here.
 *
 * @since 0.8.0
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Lru } from "./Lru.js"

/** What a cache is: a weak memo, a bounded LRU, or one lazily made value. @since 0.8.0 */
export type Kind = "weak" | "lru" | "slot"

/** A cache of the registry, as {@link list} describes it. @since 0.8.0 */
export interface Info {
  /** `<package>.<Module>.<what>`, e.g. `providers.requestBody.jsonOfItem`. */
  readonly name: string
  readonly kind: Kind
  /** The most entries an LRU keeps; undefined for a weak memo (bounded by its keys' lives) and a slot (one). */
  readonly capacity: number | undefined
  /** Entries held now in the caller's set: an LRU's size, 0 or 1 for a slot; undefined for a weak memo (a `WeakMap` has no size). */
  readonly size: number | undefined
}

/** One registered cache: its description and how to make an empty instance of it. */
interface Entry {
  readonly index: number
  readonly name: string
  readonly kind: Kind
  readonly capacity: number | undefined
  readonly make: () => Instance
}

/** A slot's box: `value` is undefined until made. */
interface Box {
  value: unknown
}

type Instance = WeakMap<object, unknown> | Lru<unknown, unknown> | Box

/** A set of caches: one instance per registered cache, made when first asked for. */
class CacheSet {
  readonly instances: Array<Instance | undefined> = []
  instanceOf(entry: Entry): Instance {
    let found = this.instances[entry.index]
    if (found === undefined) {
      found = entry.make()
      this.instances[entry.index] = found
    }
    return found
  }
  clear(entry: Entry): void {
    if (this.instances[entry.index] !== undefined) this.instances[entry.index] = entry.make()
  }
  /** Empty every instance (an LRU or slot someone still holds reads empty) and drop them all. */
  clearAll(): void {
    for (const instance of this.instances) {
      if (instance instanceof Lru) instance.clear()
      else if (instance !== undefined && !(instance instanceof WeakMap)) instance.value = undefined
    }
    this.instances.length = 0
  }
}

/** Every cache declared, in the order their modules loaded. */
const registry: Array<Entry> = []

/** The process's set: what every cache reads without a layer. */
const processSet = new CacheSet()

/**
 * How many scoped sets ({@link layer}) are open in the process. While none is, a handle reads the
 * process's set without asking for the fiber: one comparison on the hot path.
 */
let scopedSets = 0

/** The set of the fiber a layer scoped (undefined: the process's). */
const currentSet = FiberRef.unsafeMake<CacheSet | undefined>(undefined)

/** The set the caller sees: its fiber's scoped set, else the process's. */
const setOfCaller = (): CacheSet => {
  if (scopedSets === 0) return processSet
  const fiber = Fiber.getCurrentFiber()
  if (Option.isNone(fiber)) return processSet
  return fiber.value.getFiberRef(currentSet) ?? processSet
}

const register = (name: string, kind: Kind, capacity: number | undefined, make: () => Instance): Entry => {
  const entry: Entry = { index: registry.length, name, kind, capacity, make }
  registry.push(entry)
  processSet.instanceOf(entry)
  return entry
}

/** The instance of `entry` in the caller's set. */
const instanceOf = (entry: Entry): Instance => {
  const set = setOfCaller()
  return set.instances[entry.index] ?? set.instanceOf(entry)
}

/** A weak memo declared with {@link weak}: the `WeakMap` of the caller's set. @since 0.8.0 */
export interface Weak<K extends object, V> {
  /** The cache's name. */
  readonly name: string
  /** The value remembered for `key`. */
  get(key: K): V | undefined
  /** Whether a value is remembered for `key`. */
  has(key: K): boolean
  /** Remember `value` for `key` (until `key` is collected or the set cleared). */
  set(key: K, value: V): this
  /** Forget `key`. */
  delete(key: K): boolean
}

/** A bounded LRU declared with {@link lru}: the {@link Lru} of the caller's set, with its methods. @since 0.8.0 */
export interface Bounded<K, V> {
  /** The cache's name. */
  readonly name: string
  /** The most entries kept. */
  readonly capacity: number
  /** The LRU of the caller's set (for a caller that makes many calls on it in a row). */
  current(): Lru<K, V>
  /** {@link Lru.get}: the value of `key`, which becomes the most recent. */
  get(key: K): V | undefined
  /** {@link Lru.peek}: the value of `key`, its recency unchanged. */
  peek(key: K): V | undefined
  /** {@link Lru.has}: whether `key` is held, its recency unchanged. */
  has(key: K): boolean
  /** {@link Lru.set}: hold `value` under `key` as the most recent entry; the oldest leaves past the capacity. */
  set(key: K, value: V): this
  /** {@link Lru.delete}: forget `key`. */
  delete(key: K): boolean
  /** Forget every entry of the caller's set. */
  clear(): void
  /** How many entries the caller's set holds. */
  readonly size: number
}

/** One value declared with {@link slot}, made on first use in each set. @since 0.8.0 */
export interface Slot<A> {
  /** The cache's name. */
  readonly name: string
  /** The value of the caller's set, made with `make` the first time it is asked for there. */
  get(make: () => A): A
  /** Forget the value of the caller's set (the next `get` makes it again). */
  clear(): void
}

class WeakHandle<K extends object, V> implements Weak<K, V> {
  readonly #entry: Entry
  constructor(entry: Entry) {
    this.#entry = entry
  }
  /** The cache's name. */
  get name(): string {
    return this.#entry.name
  }
  /** The value remembered for `key`. */
  get(key: K): V | undefined {
    return (instanceOf(this.#entry) as WeakMap<K, V>).get(key)
  }
  /** Whether a value is remembered for `key`. */
  has(key: K): boolean {
    return (instanceOf(this.#entry) as WeakMap<K, V>).has(key)
  }
  /** Remember `value` for `key` (until `key` is collected or the set cleared). */
  set(key: K, value: V): this {
    ;(instanceOf(this.#entry) as WeakMap<K, V>).set(key, value)
    return this
  }
  /** Forget `key`. */
  delete(key: K): boolean {
    return (instanceOf(this.#entry) as WeakMap<K, V>).delete(key)
  }
}

class BoundedHandle<K, V> implements Bounded<K, V> {
  readonly #entry: Entry
  constructor(entry: Entry) {
    this.#entry = entry
  }
  /** The cache's name. */
  get name(): string {
    return this.#entry.name
  }
  /** The most entries kept. */
  get capacity(): number {
    return this.#entry.capacity ?? 1
  }
  /** The LRU of the caller's set (for a caller that makes many calls on it in a row). */
  current(): Lru<K, V> {
    return instanceOf(this.#entry) as Lru<K, V>
  }
  /** {@link Lru.get}: the value of `key`, which becomes the most recent. */
  get(key: K): V | undefined {
    return this.current().get(key)
  }
  /** {@link Lru.peek}: the value of `key`, its recency unchanged. */
  peek(key: K): V | undefined {
    return this.current().peek(key)
  }
  /** {@link Lru.has}: whether `key` is held, its recency unchanged. */
  has(key: K): boolean {
    return this.current().has(key)
  }
  /** {@link Lru.set}: hold `value` under `key` as the most recent entry; the oldest leaves past the capacity. */
  set(key: K, value: V): this {
    this.current().set(key, value)
    return this
  }
  /** {@link Lru.delete}: forget `key`. */
  delete(key: K): boolean {
    return this.current().delete(key)
  }
  /** Forget every entry of the caller's set. */
  clear(): void {
    this.current().clear()
  }
  /** How many entries the caller's set holds. */
  get size(): number {
    return this.current().size
  }
}

class SlotHandle<A> implements Slot<A> {
  readonly #entry: Entry
  constructor(entry: Entry) {
    this.#entry = entry
  }
  /** The cache's name. */
  get name(): string {
    return this.#entry.name
  }
  /** The value of the caller's set, made with `make` the first time it is asked for there. */
  get(make: () => A): A {
    const box = instanceOf(this.#entry) as Box
    if (box.value === undefined) box.value = make()
    return box.value as A
  }
  /** Forget the value of the caller's set (the next `get` makes it again). */
  clear(): void {
    ;(instanceOf(this.#entry) as Box).value = undefined
  }
}

/**
 * Declare a weak memo named `name` (`<package>.<Module>.<what>`): what a pure function computes from
 * an immutable object, kept as long as the object lives. Call once, where the module loads.
 * @since 0.8.0
 */
export const weak = <K extends object, V>(name: string): Weak<K, V> =>
  new WeakHandle(register(name, "weak", undefined, () => new WeakMap()))

/**
 * Declare a bounded LRU named `name` of at most `capacity` entries (at least one), the one LRU
 * ({@link Lru}). Call once, where the module loads.
 * @since 0.8.0
 */
export const lru = <K, V>(name: string, capacity: number): Bounded<K, V> => {
  const bounded = Math.max(1, capacity)
  return new BoundedHandle(register(name, "lru", bounded, () => new Lru(bounded)))
}

/**
 * Declare a slot named `name`: one value made on first use (a constant costly to make, or a memo that
 * keeps its own bounded state). `undefined` cannot be held (it reads as not made). Call once, where the
 * module loads.
 * @since 0.8.0
 */
export const slot = <A>(name: string): Slot<A> =>
  new SlotHandle(register(name, "slot", undefined, () => ({ value: undefined })))

const infoOf = (set: CacheSet, entry: Entry): Info => {
  const instance = set.instances[entry.index]
  const size =
    instance instanceof Lru
      ? instance.size
      : instance instanceof WeakMap
        ? undefined
        : instance === undefined
          ? entry.kind === "weak"
            ? undefined
            : 0
          : instance.value === undefined
            ? 0
            : 1
  return { name: entry.name, kind: entry.kind, capacity: entry.capacity, size }
}

/**
 * Every cache declared so far (each module declares its own when it loads), in load order, with the
 * size each has in the caller's set.
 * @since 0.8.0
 */
export const list = (): ReadonlyArray<Info> => {
  const set = setOfCaller()
  return registry.map((entry) => infoOf(set, entry))
}

/**
 * Empty the caches of the caller's set (the process's without a layer): all of them, or those named.
 * What was remembered is computed again when next asked for.
 * @since 0.8.0
 */
export const clear = (names?: ReadonlyArray<string>): void => {
  const set = setOfCaller()
  for (const entry of registry) if (names === undefined || names.includes(entry.name)) set.clear(entry)
}

/**
 * A fresh, empty set of caches for everything run with this layer (fibers it forks included),
 * dropped when the layer's scope closes; outside it the process's set is untouched. Each use of the
 * layer (each `Effect.provide`, each runtime) makes its own set.
 * @since 0.8.0
 */
export const layer: Layer.Layer<never> = Layer.scopedDiscard(
  Effect.acquireRelease(
    Effect.sync(() => {
      scopedSets++
      return new CacheSet()
    }),
    (set) =>
      Effect.sync(() => {
        set.clearAll()
        scopedSets--
      })
  ).pipe(Effect.flatMap((set) => Effect.locallyScoped(currentSet, set)))
)
