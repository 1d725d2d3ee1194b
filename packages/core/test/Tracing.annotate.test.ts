// Tracing.annotate sets an attribute where Effect.annotateCurrentSpan would (ADR 0168): the current span;
// the parent of a span whose propagation is disabled; nothing when there is no span. Each case runs both
// and compares the attributes the spans end with.
import { Tracing } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"

type Annotate = (key: string, value: unknown) => Effect.Effect<void>
const both: ReadonlyArray<readonly [string, Annotate]> = [
  ["Effect.annotateCurrentSpan", (key, value) => Effect.annotateCurrentSpan(key, value)],
  ["Tracing.annotate", Tracing.annotate]
]

/** The attributes of the spans an annotation ran under: [outer, inner], read once both ended. */
const attributesOf = (
  annotate: Annotate,
  inner: (effect: Effect.Effect<void>) => Effect.Effect<void>
): Effect.Effect<ReadonlyArray<Record<string, unknown>>> =>
  Effect.gen(function* () {
    const spans: Array<Tracer.Span> = []
    const capture = Effect.flatMap(Effect.currentSpan, (span) => Effect.sync(() => spans.push(span))).pipe(
      Effect.orElse(() => Effect.void)
    )
    yield* Effect.zipRight(capture, inner(Effect.zipRight(capture, annotate("ctxlog.stream", "s-1")))).pipe(
      Effect.withSpan("outer")
    )
    return spans.map((span) => Object.fromEntries(span.attributes))
  })

describe("Tracing.annotate", () => {
  it.effect("annotates the current span, as annotateCurrentSpan does", () =>
    Effect.gen(function* () {
      for (const [name, annotate] of both) {
        const [outer, inner] = yield* attributesOf(annotate, (effect) => Effect.withSpan(effect, "inner"))
        assert.deepStrictEqual(outer, {}, name)
        assert.deepStrictEqual(inner, { "ctxlog.stream": "s-1" }, name)
      }
    })
  )

  it.effect("a span whose propagation is disabled hands the attribute to its parent, as annotateCurrentSpan does", () =>
    Effect.gen(function* () {
      for (const [name, annotate] of both) {
        const spans = yield* attributesOf(annotate, (effect) =>
          Effect.withSpan(effect, "inner").pipe(Effect.withTracerEnabled(false))
        )
        assert.deepStrictEqual(spans[0], { "ctxlog.stream": "s-1" }, name)
      }
    })
  )

  it.effect("without a span it does nothing and succeeds", () =>
    Effect.gen(function* () {
      for (const [name, annotate] of both) {
        const exit = yield* Effect.exit(annotate("ctxlog.stream", "s-1"))
        assert.strictEqual(exit._tag, "Success", name)
        assert.isTrue(Option.isNone(yield* Effect.option(Effect.currentSpan)), name)
      }
    })
  )
})
