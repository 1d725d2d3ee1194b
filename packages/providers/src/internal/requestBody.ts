/**
 * A request body assembled and hashed from cached pieces. A request is `head` (the keys before its
 * message list, up to `[`), its items' JSON joined by commas, and `tail` (`]` and the keys after):
 * `JSON.stringify` keeps key order, so those pieces are the bytes of `JSON.stringify(request)`. Items
 * are immutable and rendered once, so each one's JSON is kept by object; per cache key the SHA-256
 * state and the text of the body up to a stable prefix (the items every later render of the same
 * history keeps) are kept too, and the next render copies that state (`Hash.copy()`) and adds only
 * the bytes after it. `RenderRecord.requestSha256` and `RenderRecord.serialize` read what is
 * registered here for a request object; a request nothing registered is serialized and hashed whole.
 */
import { createHash, type Hash } from "node:crypto"
import { Caches } from "@ctxlog/core"
import { add, counters } from "./renderCounters.js"

const jsonOfItem = Caches.weak<object, string>("providers.requestBody.jsonOfItem")
const shaOfRequest = Caches.weak<object, () => string>("providers.requestBody.shaOfRequest")
const bodyOfRequest = Caches.weak<object, () => string>("providers.requestBody.bodyOfRequest")

/** The JSON text of an immutable request item (a message), serialized once per object. */
export const jsonOf = (item: object): string => {
  const cached = jsonOfItem.get(item)
  if (cached !== undefined) return cached
  const json = JSON.stringify(item)
  jsonOfItem.set(item, json)
  return json
}

/** The SHA-256 of `JSON.stringify(request)` when it was registered here, else undefined. */
export const sha256Of = (request: unknown): string | undefined => {
  if (typeof request !== "object" || request === null) return undefined
  return shaOfRequest.get(request)?.()
}

/** `JSON.stringify(request)` when it was registered here (assembled from cached pieces), else undefined. */
export const bodyOf = (request: unknown): string | undefined => {
  if (typeof request !== "object" || request === null) return undefined
  return bodyOfRequest.get(request)?.()
}

/** Register a request's hash and body, computed on first use (the Anthropic render cache's own path). */
export const registerLazy = (request: object, sha256: () => string, body: () => string): void => {
  shaOfRequest.set(request, sha256)
  bodyOfRequest.set(request, body)
}

/**
 * The body around the item list `field`: the keys before it serialize the same alone as inside the
 * whole request, and so do the keys after it.
 */
export const around = (request: object, field: string): { readonly head: string; readonly tail: string } => {
  const before: Record<string, unknown> = {}
  const after: Record<string, unknown> = {}
  let seen = false
  for (const [key, value] of Object.entries(request)) {
    if (key === field) seen = true
    else if (seen) after[key] = value
    else before[key] = value
  }
  const head = JSON.stringify(before)
  const tail = JSON.stringify(after)
  return {
    head: head === "{}" ? `{${JSON.stringify(field)}:[` : `${head.slice(0, -1)},${JSON.stringify(field)}:[`,
    tail: tail === "{}" ? "]}" : `],${tail.slice(1)}`
  }
}

interface State {
  readonly head: string
  /** The items of the last registered request (by identity). */
  readonly items: ReadonlyArray<object>
  /** SHA-256 state after `head` and the first `hashed` items (each with its comma). */
  readonly prefixHash: Hash
  /** The same bytes as text. */
  readonly prefixText: string
  readonly hashed: number
}

const maxStates = 16
const states = Caches.lru<string, State>("providers.requestBody.states", maxStates)

/** Forget every state (tests). */
export const clear = (): void => states.clear()

/**
 * Register the hash and body of `request`, whose item list `field` holds `items`, reusing the hashed
 * prefix of the last request registered under `key` when its items start the same (by identity).
 * `stable` is how many leading items the next render of a longer history keeps: the hashed prefix
 * stops there (never at the last item: the body's tail follows it without a comma).
 */
export const register = (key: string, request: object, field: string, items: ReadonlyArray<object>, stable: number) => {
  const { head, tail } = around(request, field)
  const previous = states.peek(key)
  let same = 0
  if (previous !== undefined) {
    const limit = Math.min(previous.hashed, items.length)
    while (same < limit && previous.items[same] === items[same]) same++
  }
  let prefixHash: Hash
  let prefixText: string
  let hashed: number
  if (
    previous !== undefined &&
    previous.head === head &&
    previous.hashed <= same &&
    (previous.hashed === 0 || previous.hashed < items.length)
  ) {
    prefixHash = previous.prefixHash.copy()
    prefixText = previous.prefixText
    hashed = previous.hashed
  } else {
    prefixHash = createHash("sha256").update(head)
    prefixText = head
    add(counters.charsHashed, head.length)
    hashed = 0
  }
  const upTo = Math.max(hashed, Math.min(stable, items.length - 1))
  const added: Array<string> = []
  for (let index = hashed; index < upTo; index++) {
    const item = items[index]
    if (item === undefined) break
    const json = `${jsonOf(item)},`
    prefixHash.update(json)
    added.push(json)
    add(counters.charsHashed, json.length)
  }
  if (added.length > 0) prefixText = `${prefixText}${added.join("")}`
  hashed = upTo
  const done = prefixHash.copy()
  let rest: string | undefined
  const restOf = (): string => {
    if (rest !== undefined) return rest
    const texts: Array<string> = []
    for (let index = hashed; index < items.length; index++) {
      const item = items[index]
      if (item !== undefined) texts.push(jsonOf(item))
    }
    rest = `${texts.join(",")}${tail}`
    return rest
  }
  let digest: string | undefined
  registerLazy(
    request,
    () => {
      if (digest !== undefined) return digest
      const text = restOf()
      add(counters.charsHashed, text.length)
      digest = done.update(text).digest("hex")
      return digest
    },
    () => `${prefixText}${restOf()}`
  )
  states.set(key, { head, items, prefixHash, prefixText, hashed })
}
