import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createContext } from "@ctxlog/client"
import { EventLog, type Window, type WindowEvent } from "@ctxlog/core"
import { RenderRecord } from "@ctxlog/providers"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/** A fresh SQLite file in a temporary directory. */
export const tempDb = (): string => join(mkdtempSync(join(tmpdir(), "ctxlog-integrations-")), "agent.db")

/** Every event of a stream, read back from the file, and what `RenderRecord.verifyAll` says of its renders. */
export interface ReadBack {
  readonly events: ReadonlyArray<{ readonly event: WindowEvent.WindowEvent; readonly version: number }>
  readonly window: Window.Window
  readonly tags: ReadonlyArray<string>
  readonly count: (tag: WindowEvent.WindowEvent["_tag"]) => number
  readonly verification: RenderRecord.Verification
}

export const readBack = async (filename: string, stream: string): Promise<ReadBack> => {
  const ctx = await createContext({ sqlite: filename, create: false })
  try {
    const events = Chunk.toReadonlyArray(
      await ctx.runtime.runPromise(Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read(stream))))
    )
    const window = await ctx.load(stream)
    const tags = events.map((stored) => stored.event._tag)
    const count = (tag: WindowEvent.WindowEvent["_tag"]) => tags.filter((t) => t === tag).length
    return { events, window, tags, count, verification: RenderRecord.verifyAll(events) }
  } finally {
    await ctx.close()
  }
}

/** A `LanguageModelV3` usage. */
export const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 }
})
