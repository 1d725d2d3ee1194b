import { Compactor, ContextService, Ids, Message, TokenCounter, type Window } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { TemplateCompactor, TieredCompaction } from "../src/index.js"

/** How often the test compactor was called, and what it should do next. */
export class CompactorProbe extends Context.Tag("test/CompactorProbe")<
  CompactorProbe,
  {
    readonly calls: Ref.Ref<number>
    /** Fail the next n calls. */
    readonly failNext: Ref.Ref<number>
    /** Never answer (to exercise timeouts). */
    readonly hang: Ref.Ref<boolean>
  }
>() {}

/** A template compactor that counts its calls and can be told to fail or hang. */
export const countingCompactor: Layer.Layer<Compactor.Compactor | CompactorProbe> = Layer.effectContext(
  Effect.gen(function* () {
    const calls = yield* Ref.make(0)
    const failNext = yield* Ref.make(0)
    const hang = yield* Ref.make(false)
    const inner = TemplateCompactor.make({ maxBytes: 2000 })
    const service: Compactor.Compactor.Service = {
      name: "counting",
      compact: (input) =>
        Effect.gen(function* () {
          yield* Ref.update(calls, (n) => n + 1)
          if (yield* Ref.get(hang)) return yield* Effect.never
          const failing = yield* Ref.modify(failNext, (n) => [n > 0, Math.max(0, n - 1)] as const)
          if (failing) {
            return yield* new Compactor.CompactionError({
              compactor: "counting",
              reason: "model",
              detail: "scripted failure"
            })
          }
          return yield* inner.compact(input)
        })
    }
    return Context.make(Compactor.Compactor, service).pipe(Context.add(CompactorProbe, { calls, failNext, hang }))
  })
)

/** The core window service over an in-memory log, with the 4-characters-a-token heuristic. */
export const coreLayer = ContextService.layerMemory({
  tokenCounter: TokenCounter.layerHeuristic(4),
  ids: Ids.layerSequential("t")
})

/** Everything the compaction tests need. */
export const testLayer = Layer.merge(coreLayer, countingCompactor)

/** `n` characters of filler text. */
export const filler = (n: number, seed = "x"): string => `${seed} `.repeat(Math.ceil(n / (seed.length + 1))).slice(0, n)

let callCounter = 0

/** A user turn followed by one tool round trip with an output of `outputChars` characters. */
export const toolTurn = (request: string, tool: string, outputChars: number): ReadonlyArray<Message.MessageInput> => {
  callCounter += 1
  const id = `call-${callCounter}`
  return [
    Message.user(request),
    Message.assistant(`I will run ${tool} for ${request}.`, [
      Message.toolCall(id, tool, { command: `${tool} ${request}` })
    ]),
    Message.tool(id, `${tool} output for ${request}\n${filler(outputChars)}`),
    Message.assistant(`Done with ${request}.`)
  ]
}

/** Append tool turns (large, prunable outputs the model has seen) until the window reaches `wanted` pressure under `config`. */
export const fillWithTools = (
  config: TieredCompaction.Config,
  stream: string,
  wanted: TieredCompaction.Pressure,
  outputChars = 2400
): Effect.Effect<Window.Window, ContextService.ContextError, ContextService.ContextService> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    let window = yield* ctx.load(stream)
    let i = 0
    while (TieredCompaction.pressure(window, config) !== wanted) {
      i += 1
      window = (yield* ctx.appendMessages(stream, toolTurn(`task ${i}`, "grep", outputChars))).window
      if (i > 200) return yield* Effect.dieMessage("never reached the wanted pressure")
    }
    return window
  })
