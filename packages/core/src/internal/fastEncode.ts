/**
 * The append's fast encoder: the stored JSON of an event of the commonest shape, written in plain code
 * instead of by a Schema pass and a validation walk (those were about half of the CPU and of the bytes
 * allocated by one `EventLog.append` of a message, issue 24, ADR 0079).
 *
 * It knows `MessageAppended` whose message has the fields of `Message` and whose parts are text parts
 * (without citations), tool calls and tool results (without content parts). For any other event, and
 * for anything it is not sure of (an unknown or repeated key, a value of another type, a surrogate, a
 * nesting deeper than {@link fastDepth}), it answers undefined and the caller takes the full path
 * (`Validation.valueProblem`, then the Schema encode), which also names what is wrong.
 *
 * When it answers, the answer is what the full path would give: the event passes `valueProblem` and
 * the Schema encode, and the text is `JSON.stringify` of the Schema's encoded form (keys in the
 * schema's order, optional keys only when present). `EventCodec.fastEncode.property.test.ts` holds it
 * to that on generated events, valid and broken.
 */
import { messageKinds, Role } from "../Message.js"
import { storableText } from "./textRules.js"

/** The deepest container the fast path walks (the event is level 1); deeper goes the full path. */
export const fastDepth = 64

const roles: ReadonlySet<unknown> = new Set(Role.literals)
const kinds: ReadonlySet<unknown> = new Set(messageKinds)

const isPlain = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/**
 * The own keys of a plain object when each is one of `allowed` and every `required` one is present;
 * undefined otherwise (a symbol key, an unknown key, a missing one).
 */
const keysWithin = (
  value: Record<string, unknown>,
  allowed: ReadonlySet<string>,
  required: number
): ReadonlyArray<string> | undefined => {
  const keys = Reflect.ownKeys(value)
  let present = 0
  for (const key of keys) {
    if (typeof key !== "string" || !allowed.has(key)) return undefined
    present++
  }
  return present >= required ? (keys as Array<string>) : undefined
}

const has = (value: Record<string, unknown>, key: string): boolean => Object.hasOwn(value, key)

/** A storable string's JSON, or undefined. */
const text = (value: unknown, nonEmpty = false): string | undefined =>
  typeof value === "string" && (!nonEmpty || value.length > 0) && storableText(value)
    ? JSON.stringify(value)
    : undefined

/**
 * Whether `value` is a JSON value the full path accepts as is (`Message.JsonValue` and
 * `Validation.valueProblem` alike): plain objects and arrays without holes, finite numbers, storable
 * strings and keys, no `__proto__` key, at most `depth` levels under `limit`. Iterative.
 */
const plainJson = (value: unknown, depth: number): boolean => {
  const stack: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth }]
  for (;;) {
    const frame = stack.pop()
    if (frame === undefined) return true
    const item = frame.value
    switch (typeof item) {
      case "string":
        if (!storableText(item)) return false
        continue
      case "boolean":
        continue
      case "number":
        if (!Number.isFinite(item)) return false
        continue
      case "object": {
        if (item === null) continue
        if (frame.depth > fastDepth) return false
        if (Array.isArray(item)) {
          for (let index = 0; index < item.length; index++) {
            if (!(index in item)) return false
            stack.push({ value: item[index], depth: frame.depth + 1 })
          }
          continue
        }
        if (!isPlain(item)) return false
        for (const key of Reflect.ownKeys(item)) {
          if (typeof key !== "string" || key === "__proto__" || !storableText(key)) return false
          // A non-enumerable key: JSON and the checks see only enumerable ones; let the full path decide.
          if (!Object.prototype.propertyIsEnumerable.call(item, key)) return false
          stack.push({ value: item[key], depth: frame.depth + 1 })
        }
        continue
      }
      default:
        return false
    }
  }
}

const textPartKeys: ReadonlySet<string> = new Set(["type", "text"])
const toolCallKeys: ReadonlySet<string> = new Set(["type", "id", "name", "input"])
const toolResultKeys: ReadonlySet<string> = new Set(["type", "toolCallId", "content", "isError"])

/** A storable string (non-empty when asked). */
const storable = (value: unknown, nonEmpty = false): value is string =>
  typeof value === "string" && (!nonEmpty || value.length > 0) && storableText(value)

/**
 * Whether `part` (level `depth`) is of a shape this path knows and valid as it is: a text part, a tool call
 * or a tool result, with exactly its fields, of their types, storable. The one test of a known part, for
 * the encoder here and for the check of message inputs (`Validation.messagesProblem`).
 */
export const knownPart = (part: unknown, depth: number): part is Record<string, unknown> => {
  if (!isPlain(part)) return false
  switch (part.type) {
    case "text":
      return keysWithin(part, textPartKeys, 2) !== undefined && storable(part.text)
    case "tool_call":
      return (
        keysWithin(part, toolCallKeys, 4) !== undefined &&
        storable(part.id, true) &&
        storable(part.name, true) &&
        plainJson(part.input, depth + 1)
      )
    case "tool_result":
      return (
        keysWithin(part, toolResultKeys, 4) !== undefined &&
        storable(part.toolCallId, true) &&
        storable(part.content) &&
        typeof part.isError === "boolean"
      )
    default:
      return false
  }
}

/** One part's JSON (level `depth`), or undefined. */
const partJson = (part: unknown, depth: number): string | undefined => {
  if (!knownPart(part, depth)) return undefined
  switch (part.type) {
    case "text":
      return `{"type":"text","text":${JSON.stringify(part.text)}}`
    case "tool_call":
      return `{"type":"tool_call","id":${JSON.stringify(part.id)},"name":${JSON.stringify(part.name)},"input":${JSON.stringify(part.input)}}`
    default:
      return `{"type":"tool_result","toolCallId":${JSON.stringify(part.toolCallId)},"content":${JSON.stringify(part.content)},"isError":${part.isError}}`
  }
}

const inputKeys: ReadonlySet<string> = new Set(["role", "parts", "kind", "pinned", "id", "name"])

/**
 * Whether a message input (level 1) is of the commonest shape and a storable JSON value as it is: a plain
 * object with `role` and `parts` and at most `kind`, `pinned`, `id` and `name`, of their types, every
 * part a {@link knownPart}. True means `Validation.valueProblem` finds nothing in it; false says nothing
 * (the full walk decides, and names the offender).
 */
export const knownMessageInput = (input: unknown): boolean => {
  if (!isPlain(input) || keysWithin(input, inputKeys, 2) === undefined) return false
  if (!storable(input.role) || !has(input, "parts")) return false
  if (has(input, "kind") && !storable(input.kind)) return false
  if (has(input, "id") && !storable(input.id)) return false
  if (has(input, "name") && !storable(input.name)) return false
  if (has(input, "pinned") && typeof input.pinned !== "boolean") return false
  const parts = input.parts
  if (!Array.isArray(parts)) return false
  for (let index = 0; index < parts.length; index++) {
    if (!(index in parts) || !knownPart(parts[index], 3)) return false
  }
  return true
}

const messageKeys: ReadonlySet<string> = new Set(["id", "role", "kind", "parts", "tokens", "pinned", "origin"])
const originKeys: ReadonlySet<string> = new Set(["version", "eventId"])
const eventKeys: ReadonlySet<string> = new Set(["_tag", "id", "message"])

/** A message's JSON (level 2), or undefined. */
const messageJson = (message: unknown): string | undefined => {
  if (!isPlain(message) || keysWithin(message, messageKeys, 5) === undefined) return undefined
  if (!has(message, "id") || !has(message, "role") || !has(message, "kind")) return undefined
  if (!has(message, "parts") || !has(message, "tokens")) return undefined
  const id = text(message.id, true)
  if (id === undefined || !roles.has(message.role) || !kinds.has(message.kind)) return undefined
  const tokens = message.tokens
  if (typeof tokens !== "number" || !Number.isSafeInteger(tokens) || tokens < 0) return undefined
  const parts = message.parts
  if (!Array.isArray(parts)) return undefined
  let partsJson = ""
  for (let index = 0; index < parts.length; index++) {
    if (!(index in parts)) return undefined
    const one = partJson(parts[index], 4)
    if (one === undefined) return undefined
    partsJson = index === 0 ? one : `${partsJson},${one}`
  }
  let tail = ""
  if (has(message, "pinned")) {
    if (typeof message.pinned !== "boolean") return undefined
    tail = `,"pinned":${message.pinned}`
  }
  if (has(message, "origin")) {
    const origin = message.origin
    if (!isPlain(origin) || keysWithin(origin, originKeys, 2) === undefined) return undefined
    const version = origin.version
    const eventId = text(origin.eventId)
    if (typeof version !== "number" || !Number.isSafeInteger(version) || version <= 0 || eventId === undefined) {
      return undefined
    }
    tail = `${tail},"origin":{"version":${version},"eventId":${eventId}}`
  }
  // `role` and `kind` are literals of the schema: plain ASCII, their JSON is themselves in quotes.
  return `{"id":${id},"role":"${message.role}","kind":"${message.kind}","parts":[${partsJson}],"tokens":${tokens}${tail}}`
}

/** The stored JSON of `event` when the fast path knows its shape (see above), or undefined. */
export const fastEventJson = (event: unknown): string | undefined => {
  if (!isPlain(event) || event._tag !== "MessageAppended") return undefined
  if (keysWithin(event, eventKeys, 3) === undefined) return undefined
  const id = text(event.id, true)
  if (id === undefined) return undefined
  const message = messageJson(event.message)
  return message === undefined ? undefined : `{"_tag":"MessageAppended","id":${id},"message":${message}}`
}
