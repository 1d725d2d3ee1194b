/**
 * A persistent ordered sequence of items with unique string ids: the history partition's storage.
 *
 * Shape: a rope of leaves (arrays of at most {@link leafSize} items, each with a numeric order key), plus a
 * persistent hash map id → key. Keys increase strictly along the sequence, so a key finds its leaf by
 * binary search and an id finds its item in O(log n).
 *
 * Cost per operation (n items, B = leafSize):
 * - `append`: O(1) amortized. The last leaf is shared between versions and grown in place while this
 *   version is the only one that grew it (each version records the length of its last leaf, so an older
 *   version never sees items appended after it); otherwise it is copied (≤ B items). A full leaf starts a
 *   new one, which copies the leaf spine (n / B references) once every B appends.
 * - `remove`, `replace`, `update`, `prepend`: O(k + B per touched leaf + n / B) for k items changed: the
 *   touched leaves are copied and the spine (n / B references, 1/B of the window) is copied once.
 * - `toArray`: O(n), memoized per version.
 *
 * Every copy is counted in {@link work} so tests can check the cost per event without timing anything.
 */
import * as HashMap from "effect/HashMap"
import { add, work } from "./work.js"

/** What the sequence holds. */
export interface Item {
  readonly id: string
  readonly tokens: number
}

/** Largest leaf (tests make it small, so that short sequences span many leaves). */
export let leafSize = 128

/** Set the largest leaf (tests only). */
export const setLeafSize = (size: number): void => {
  leafSize = Math.max(1, Math.floor(size))
}

interface Leaf<T> {
  // Shared between versions and only ever grown in place at the end, by a version whose last leaf it is
  // and whose recorded length equals the arrays' length (nobody grew it past that version yet).
  readonly keys: Array<number>
  readonly items: Array<T>
}

/** A leaf and how many of its items belong to the version holding this entry. */
interface Entry<T> {
  readonly leaf: Leaf<T>
  readonly length: number
}

/** A persistent sequence. Build one with {@link Seq.empty} or {@link Seq.from}. */
export class Seq<T extends Item> {
  #array: ReadonlyArray<T> | undefined

  /** @internal */
  constructor(
    /** Leaves with their lengths, none empty. The last entry's length is `tail`. */
    readonly entries: ReadonlyArray<Entry<T>>,
    /** Length of the last leaf in this version (kept here so that growing it needs no spine copy). */
    readonly tail: number,
    readonly length: number,
    /** Sum of the items' tokens. */
    readonly tokens: number,
    readonly index: HashMap.HashMap<string, number>
  ) {}

  /** Length of leaf `i` in this version. */
  private lengthOf(i: number): number {
    return i === this.entries.length - 1 ? this.tail : (this.entries[i]?.length ?? 0)
  }

  /** The spine with the last entry's length brought up to date (before it is copied). */
  private spine(): Array<Entry<T>> {
    const spine = this.entries.slice()
    const last = spine[spine.length - 1]
    if (last !== undefined && last.length !== this.tail)
      spine[spine.length - 1] = { leaf: last.leaf, length: this.tail }
    add(work.spine, spine.length)
    return spine
  }

  /** Whether an item with this id is present. */
  has(id: string): boolean {
    return HashMap.has(this.index, id)
  }

  /** The item with this id. */
  get(id: string): T | undefined {
    const key = HashMap.get(this.index, id)
    if (key._tag === "None") return undefined
    const at = this.locate(key.value)
    return at === undefined ? undefined : this.entries[at.leaf]?.leaf.items[at.offset]
  }

  /** The order key of an id (greater keys come later). */
  keyOf(id: string): number | undefined {
    const key = HashMap.get(this.index, id)
    return key._tag === "None" ? undefined : key.value
  }

  /** Leaf and offset of a key present in the sequence. */
  private locate(key: number): { readonly leaf: number; readonly offset: number } | undefined {
    const entries = this.entries
    let lo = 0
    let hi = entries.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      const first = entries[mid]?.leaf.keys[0] ?? Number.POSITIVE_INFINITY
      if (first <= key) lo = mid
      else hi = mid - 1
    }
    const entry = entries[lo]
    if (entry === undefined) return undefined
    const keys = entry.leaf.keys
    let a = 0
    let b = this.lengthOf(lo) - 1
    while (a <= b) {
      const mid = (a + b) >> 1
      const at = keys[mid] ?? Number.NaN
      if (at === key) return { leaf: lo, offset: mid }
      if (at < key) a = mid + 1
      else b = mid - 1
    }
    return undefined
  }

  /** The items in order, as an array (memoized). */
  toArray(): ReadonlyArray<T> {
    if (this.#array !== undefined) return this.#array
    const out: Array<T> = new Array(this.length)
    let at = 0
    for (let i = 0; i < this.entries.length; i++) {
      const items = this.entries[i]?.leaf.items ?? []
      const length = this.lengthOf(i)
      for (let j = 0; j < length; j++) out[at++] = items[j] as T
    }
    add(work.materialized, this.length)
    this.#array = out
    return out
  }

  /** Items from the first, in order. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.entries.length; i++) {
      const items = this.entries[i]?.leaf.items ?? []
      const length = this.lengthOf(i)
      for (let j = 0; j < length; j++) yield items[j] as T
    }
  }

  /** Items from the last, backwards. */
  *reversed(): IterableIterator<T> {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const items = this.entries[i]?.leaf.items ?? []
      for (let j = this.lengthOf(i) - 1; j >= 0; j--) yield items[j] as T
    }
  }

  /** The first item. */
  first(): T | undefined {
    return this.entries[0]?.leaf.items[0]
  }

  /** The last item. */
  last(): T | undefined {
    return this.entries[this.entries.length - 1]?.leaf.items[this.tail - 1]
  }

  private firstKey(): number | undefined {
    return this.entries[0]?.leaf.keys[0]
  }

  private lastKey(): number | undefined {
    return this.entries[this.entries.length - 1]?.leaf.keys[this.tail - 1]
  }

  /**
   * Add items at the end. Several at once build one new version: the id index is grown as one transient
   * map, and the spine is copied at most once (one at a time is the same with one item).
   */
  append(added: ReadonlyArray<T>): Seq<T> {
    if (added.length === 0) return this
    let entries: Array<Entry<T>> | undefined
    let tail = this.tail
    let key = (this.lastKey() ?? -1) + 1
    let tokens = this.tokens
    const first = key
    // Our own copy of the spine, its last entry's length brought up to `tail` (made once, when needed).
    const spine = (): Array<Entry<T>> => {
      if (entries === undefined) {
        entries = this.entries.slice()
        add(work.spine, entries.length)
      }
      const last = entries[entries.length - 1]
      if (last !== undefined && last.length !== tail) entries[entries.length - 1] = { leaf: last.leaf, length: tail }
      return entries
    }
    for (const item of added) {
      const current = entries ?? this.entries
      const last = current[current.length - 1]
      add(work.copied)
      if (last !== undefined && tail < leafSize) {
        if (last.leaf.items.length === tail) {
          // Nobody grew this leaf past our version: grow the shared leaf in place.
          last.leaf.keys.push(key)
          last.leaf.items.push(item)
        } else {
          // Another version grew it: copy our part of it.
          const own = spine()
          own[own.length - 1] = {
            leaf: { keys: [...last.leaf.keys.slice(0, tail), key], items: [...last.leaf.items.slice(0, tail), item] },
            length: tail + 1
          }
          add(work.copied, tail)
        }
        tail += 1
      } else {
        spine().push({ leaf: { keys: [key], items: [item] }, length: 1 })
        tail = 1
      }
      tokens += item.tokens
      key += 1
    }
    // One id (the usual append) is one persistent insert; more grow one transient map.
    const index =
      added.length === 1
        ? HashMap.set(this.index, (added[0] as T).id, first)
        : HashMap.mutate(this.index, (map) => {
            for (let at = 0; at < added.length; at++) HashMap.set(map, (added[at] as T).id, first + at)
          })
    return new Seq(entries ?? this.entries, tail, this.length + added.length, tokens, index)
  }

  /** Replace the item with `item.id` in place. */
  update(item: T): Seq<T> {
    const key = HashMap.get(this.index, item.id)
    if (key._tag === "None") return this
    const at = this.locate(key.value)
    const entry = at === undefined ? undefined : this.entries[at.leaf]
    if (at === undefined || entry === undefined) return this
    const length = this.lengthOf(at.leaf)
    const old = entry.leaf.items[at.offset] as T
    const items = entry.leaf.items.slice(0, length)
    items[at.offset] = item
    const spine = this.spine()
    spine[at.leaf] = { leaf: { keys: entry.leaf.keys.slice(0, length), items }, length }
    add(work.copied, length)
    return new Seq(spine, this.tail, this.length, this.tokens - old.tokens + item.tokens, this.index)
  }

  /** Remove the items with these ids (absent ids are ignored); also returns the removed items, in order. */
  remove(ids: Iterable<string>): { readonly seq: Seq<T>; readonly removed: ReadonlyArray<T> } {
    const byLeaf = new Map<number, Set<number>>()
    for (const id of ids) {
      const key = HashMap.get(this.index, id)
      if (key._tag === "None") continue
      const at = this.locate(key.value)
      if (at === undefined) continue
      const offsets = byLeaf.get(at.leaf)
      if (offsets === undefined) byLeaf.set(at.leaf, new Set([at.offset]))
      else offsets.add(at.offset)
    }
    if (byLeaf.size === 0) return { seq: this, removed: [] }
    const spine: Array<Entry<T>> = []
    const removed: Array<T> = []
    let index = this.index
    let tokens = this.tokens
    for (let i = 0; i < this.entries.length; i++) {
      const entry = this.entries[i] as Entry<T>
      const length = this.lengthOf(i)
      const offsets = byLeaf.get(i)
      if (offsets === undefined) {
        spine.push(length === entry.length ? entry : { leaf: entry.leaf, length })
        continue
      }
      const keys: Array<number> = []
      const items: Array<T> = []
      for (let j = 0; j < length; j++) {
        const item = entry.leaf.items[j] as T
        if (offsets.has(j)) {
          removed.push(item)
          index = HashMap.remove(index, item.id)
          tokens -= item.tokens
        } else {
          keys.push(entry.leaf.keys[j] as number)
          items.push(item)
        }
      }
      add(work.copied, length)
      if (items.length > 0) spine.push({ leaf: { keys, items }, length: items.length })
    }
    add(work.spine, this.entries.length)
    const tail = spine[spine.length - 1]?.length ?? 0
    return { seq: new Seq(spine, tail, this.length - removed.length, tokens, index), removed }
  }

  /**
   * Remove the items with `ids` and put `replacement` where the first of them stood (at the front when
   * none was present).
   */
  replace(
    ids: ReadonlyArray<string>,
    replacement: ReadonlyArray<T>
  ): { readonly seq: Seq<T>; readonly removed: ReadonlyArray<T> } {
    let firstRemoved: number | undefined
    for (const id of ids) {
      const key = this.keyOf(id)
      if (key !== undefined && (firstRemoved === undefined || key < firstRemoved)) firstRemoved = key
    }
    const { seq, removed } = this.remove(ids)
    if (replacement.length === 0) return { seq, removed }
    if (firstRemoved === undefined) return { seq: seq.prepend(replacement), removed }
    return { seq: seq.insertAt(firstRemoved, replacement), removed }
  }

  /** Put items at the front. */
  prepend(items: ReadonlyArray<T>): Seq<T> {
    const first = this.firstKey()
    return first === undefined ? this.append(items) : this.insertAt(first - 0.5, items)
  }

  /**
   * Insert items at the place of `key` (absent): after every item with a smaller key, before every item
   * with a larger one.
   */
  private insertAt(key: number, added: ReadonlyArray<T>): Seq<T> {
    let leafAt = -1
    for (let i = 0; i < this.entries.length; i++) {
      const entry = this.entries[i] as Entry<T>
      if ((entry.leaf.keys[this.lengthOf(i) - 1] ?? Number.NEGATIVE_INFINITY) > key) {
        leafAt = i
        break
      }
    }
    if (leafAt === -1) return this.append(added)
    const entry = this.entries[leafAt] as Entry<T>
    const length = this.lengthOf(leafAt)
    let offset = 0
    while (offset < length && (entry.leaf.keys[offset] as number) < key) offset++
    const next = entry.leaf.keys[offset] as number
    const previous =
      offset > 0
        ? (entry.leaf.keys[offset - 1] as number)
        : leafAt > 0
          ? (this.entries[leafAt - 1]?.leaf.keys[this.lengthOf(leafAt - 1) - 1] as number)
          : next - added.length - 1
    const step = (next - previous) / (added.length + 1)
    const keys = added.map((_, i) => previous + step * (i + 1))
    // Out of float precision between the neighbours (after ~50 nested inserts at one place): renumber.
    const distinct = keys.every((k, i) => k > (i === 0 ? previous : (keys[i - 1] as number)) && k < next)
    if (!distinct) {
      const all = this.toArray()
      const found = all.findIndex((item) => (this.keyOf(item.id) ?? 0) > key)
      const at = found === -1 ? all.length : found
      return Seq.from([...all.slice(0, at), ...added, ...all.slice(at)])
    }
    const newKeys = [...entry.leaf.keys.slice(0, offset), ...keys, ...entry.leaf.keys.slice(offset, length)]
    const newItems = [...entry.leaf.items.slice(0, offset), ...added, ...entry.leaf.items.slice(offset, length)]
    add(work.copied, newItems.length)
    const pieces: Array<Entry<T>> = []
    for (let i = 0; i < newItems.length; i += leafSize) {
      const items = newItems.slice(i, i + leafSize)
      pieces.push({ leaf: { keys: newKeys.slice(i, i + leafSize), items }, length: items.length })
    }
    const spine = this.spine()
    spine.splice(leafAt, 1, ...pieces)
    let index = this.index
    let tokens = this.tokens
    for (const [i, item] of added.entries()) {
      index = HashMap.set(index, item.id, keys[i] as number)
      tokens += item.tokens
    }
    const tail = spine[spine.length - 1]?.length ?? 0
    return new Seq(spine, tail, this.length + added.length, tokens, index)
  }

  /** A sequence holding `items` in order. */
  static from<T extends Item>(items: ReadonlyArray<T>): Seq<T> {
    let tokens = 0
    const index = HashMap.mutate(HashMap.empty<string, number>(), (map) => {
      for (const [key, item] of items.entries()) {
        HashMap.set(map, item.id, key)
        tokens += item.tokens
      }
    })
    const spine: Array<Entry<T>> = []
    for (let i = 0; i < items.length; i += leafSize) {
      const slice = items.slice(i, i + leafSize)
      spine.push({ leaf: { keys: slice.map((_, j) => i + j), items: slice }, length: slice.length })
    }
    add(work.copied, items.length)
    return new Seq(spine, spine[spine.length - 1]?.length ?? 0, items.length, tokens, index)
  }

  /** The empty sequence. */
  static empty<T extends Item>(): Seq<T> {
    return new Seq<T>([], 0, 0, 0, HashMap.empty())
  }
}
