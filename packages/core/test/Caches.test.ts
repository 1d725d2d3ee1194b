// The cache layer (ADR 0162): every process-wide memo and LRU is declared through `Caches`, listed by
// name; `Caches.layer` gives what runs with it a fresh set, emptied when its scope closes, and leaves the
// process's set alone.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { Caches, Message, TokenCounter, Window } from "../src/index.js"
import { sampleEvents } from "./support/sampleEvents.js"

// A cache of this test, declared as a module declares one: once, where the module loads.
const probe = Caches.lru<string, number>("core.test.probe", 2)
const probeSlot = Caches.slot<{ readonly made: number }>("core.test.probeSlot")
const probeWeak = Caches.weak<object, string>("core.test.probeWeak")

const calls = Message.assistant("", [Message.toolCall("c1", "ls", { path: "." })])

describe("Caches", () => {
  it("the process's registry lists every cache core declares, each once, with its kind and capacity", () => {
    // Loading the index loads every module of core, and each declares its caches.
    TokenCounter.estimate("warm")
    const listed = Caches.list()
    const names = listed.map((info) => info.name)
    assert.strictEqual(new Set(names).size, names.length, "a cache's name is unique")
    for (const name of [
      "core.Message.callsMemo",
      "core.Message.resultsMemo",
      "core.Message.textMemo",
      "core.evolve.states",
      "core.TokenCounter.loaded",
      "core.test.probe",
      "core.test.probeSlot",
      "core.test.probeWeak"
    ]) {
      assert.include(names, name)
    }
    const byName = new Map(listed.map((info) => [info.name, info]))
    assert.deepStrictEqual(byName.get("core.TokenCounter.loaded")?.kind, "lru")
    assert.deepStrictEqual(byName.get("core.TokenCounter.loaded")?.capacity, 2)
    assert.deepStrictEqual(byName.get("core.evolve.states")?.kind, "weak")
    assert.deepStrictEqual(byName.get("core.evolve.states")?.size, undefined)
    assert.deepStrictEqual(byName.get("core.test.probeSlot")?.kind, "slot")
  })

  it("a handle reads and writes the process's set without a layer; clear empties it, by name or all", () => {
    probe.set("a", 1).set("b", 2).set("c", 3)
    assert.deepStrictEqual([probe.has("a"), probe.peek("b"), probe.get("c"), probe.size], [false, 2, 3, 2])
    assert.strictEqual(Caches.list().find((info) => info.name === "core.test.probe")?.size, 2)
    const key = {}
    probeWeak.set(key, "k")
    assert.strictEqual(probeWeak.get(key), "k")
    assert.strictEqual(probeSlot.get(() => ({ made: 1 })).made, 1)
    assert.strictEqual(probeSlot.get(() => ({ made: 2 })).made, 1, "made once")
    Caches.clear(["core.test.probe"])
    assert.deepStrictEqual([probe.size, probeWeak.get(key), probeSlot.get(() => ({ made: 3 })).made], [0, "k", 1])
    Caches.clear()
    assert.deepStrictEqual([probeWeak.has(key), probeSlot.get(() => ({ made: 4 })).made], [false, 4])
  })

  it("a real memo is scoped: the same parts give the same remembered array, and a cleared memo a new equal one", () => {
    const first = Message.toolCallsOf(calls)
    assert.strictEqual(Message.toolCallsOf(calls), first, "remembered per parts array")
    Caches.clear(["core.Message.callsMemo"])
    const again = Message.toolCallsOf(calls)
    assert.notStrictEqual(again, first, "computed again after clear")
    assert.deepStrictEqual(again, first, "with the same answer")
  })

  it.effect("Caches.layer gives a fresh set, seen by forked fibers too, and empties it when its scope closes", () =>
    Effect.gen(function* () {
      probe.set("outside", 1)
      probeSlot.clear()
      probeSlot.get(() => ({ made: 10 }))
      const remembered = Message.toolCallsOf(calls)
      const inside = yield* Effect.sync(() => {
        // Fresh: nothing the process's set holds is here.
        assert.deepStrictEqual([probe.has("outside"), probe.size], [false, 0])
        assert.strictEqual(probeSlot.get(() => ({ made: 20 })).made, 20)
        const scopedCalls = Message.toolCallsOf(calls)
        assert.notStrictEqual(scopedCalls, remembered)
        assert.deepStrictEqual(scopedCalls, remembered)
        assert.strictEqual(Message.toolCallsOf(calls), scopedCalls, "remembered within the scoped set")
        probe.set("inside", 2)
        assert.strictEqual(Caches.list().find((info) => info.name === "core.test.probe")?.size, 1)
        return { lru: probe.current(), scopedCalls }
      }).pipe(
        Effect.tap(() =>
          // A forked fiber inherits the set.
          Effect.fork(Effect.sync(() => probe.peek("inside"))).pipe(
            Effect.flatMap(Fiber.join),
            Effect.map((seen) => assert.strictEqual(seen, 2))
          )
        ),
        Effect.provide(Caches.layer)
      )
      // The scope closed: the scoped set is emptied, the process's set is as it was.
      assert.strictEqual(inside.lru.size, 0)
      assert.deepStrictEqual([probe.peek("outside"), probe.has("inside")], [1, false])
      assert.strictEqual(probeSlot.get(() => ({ made: 30 })).made, 10)
      assert.strictEqual(Message.toolCallsOf(calls), remembered)
    })
  )

  it.effect("under the layer a replay gives the same window as without it (the fold's states are a cache)", () =>
    Effect.gen(function* () {
      const events = sampleEvents(40)
      const plain = Window.replay(events)
      const scoped = yield* Effect.sync(() => Window.replay(events)).pipe(Effect.provide(Caches.layer))
      assert.notStrictEqual(scoped, plain)
      assert.deepStrictEqual(Window.messages(scoped), Window.messages(plain))
      assert.deepStrictEqual(scoped.tokens, plain.tokens)
      // The history of a window folded elsewhere, asked for in a fresh set: the state is rebuilt from it.
      const more = sampleEvents(3, "more")
      const later = yield* Effect.sync(() => Window.replay(more, plain)).pipe(Effect.provide(Caches.layer))
      assert.deepStrictEqual(Window.messages(later), Window.messages(Window.replay(more, plain)))
      assert.strictEqual(Window.messages(later).length, 43)
    })
  )
})
