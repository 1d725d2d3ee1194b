/**
 * A tiny durable EventLog for tests: JSON lines in a real file, one stored event a line, decoded with
 * the core EventCodec on open. The in-memory log enforces the append rules; every append is written
 * through to the file before it returns, so dropping the layer and opening the file again is a restart.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs"
import { EventCodec, EventLog } from "@ctxlog/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

interface Line {
  readonly stream: string
  readonly version: number
  readonly type: string
  readonly schemaVersion: number
  readonly data: string
  readonly metadata: EventLog.EventMetadata
}

const isLine = (value: unknown): value is Line =>
  typeof value === "object" &&
  value !== null &&
  "stream" in value &&
  typeof value.stream === "string" &&
  "data" in value &&
  typeof value.data === "string" &&
  "type" in value &&
  typeof value.type === "string" &&
  "schemaVersion" in value &&
  typeof value.schemaVersion === "number"

export const make = (
  path: string
): Effect.Effect<EventLog.EventLog.Service, EventCodec.EventDecodeError | EventLog.StoreError> =>
  Effect.gen(function* () {
    const memory = yield* EventLog.makeMemory()
    const lines = existsSync(path)
      ? readFileSync(path, "utf8")
          .split("\n")
          .filter((line) => line.trim() !== "")
      : []
    for (const [index, raw] of lines.entries()) {
      const line: unknown = JSON.parse(raw)
      if (!isLine(line)) {
        return yield* new EventLog.StoreError({
          operation: "open",
          detail: `${path}:${index + 1} is not a stored event`
        })
      }
      const event = yield* EventCodec.decode(line, { stream: line.stream, line: index + 1 })
      yield* memory
        .append(line.stream, [event], "any", line.metadata)
        .pipe(Effect.mapError((error) => new EventLog.StoreError({ operation: "open", detail: error.message })))
    }
    const lock = yield* Effect.makeSemaphore(1)
    const append: EventLog.EventLog.Service["append"] = (stream, events, expected, metadata) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const result = yield* memory.append(stream, events, expected, metadata)
          if (result.written === 0) return result
          const written = yield* Stream.runCollect(
            memory.read(stream, { from: result.nextExpectedVersion - result.written + 1 })
          ).pipe(Effect.mapError((error) => new EventLog.StoreError({ operation: "append", detail: error.message })))
          const text = Chunk.toReadonlyArray(written)
            .map((envelope) =>
              JSON.stringify({
                stream,
                version: envelope.version,
                type: envelope.type,
                schemaVersion: envelope.schemaVersion,
                data: envelope.data,
                metadata: envelope.metadata
              })
            )
            .join("\n")
          yield* Effect.try({
            try: () => appendFileSync(path, `${text}\n`),
            catch: (cause) => new EventLog.StoreError({ operation: "append", detail: String(cause) })
          })
          return result
        })
      )
    return { ...memory, append }
  })

export const layer = (
  path: string
): Layer.Layer<EventLog.EventLog, EventCodec.EventDecodeError | EventLog.StoreError> =>
  Layer.effect(EventLog.EventLog, make(path))
