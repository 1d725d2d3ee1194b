/**
 * Ported from openai/openai-agents-js, packages/agents-core/test/memorySession.test.ts at commit
 * 6d0c61a5f62a5ed8142996a25b33446c810f84b3 (the newest commit of that repository we can read; the
 * installed `@openai/agents` is 0.20.0, whose source is not published there yet). MIT licence,
 * Copyright (c) OpenAI. The SDK's session contract cases, run against the installed SDK's own
 * `MemorySession` AND our `CtxlogSession` (as users import it: `@ctxlog/integrations/openai-agents`;
 * the packed-tarball test runs this file in a project that installed our tarballs): every case must
 * hold for both, so a case that no longer holds at 0.20 for the SDK itself shows up here too. The cases
 * not run, and why, are listed in packages/integrations/README.md ("Ported tests").
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CtxlogSession } from "@ctxlog/integrations/openai-agents"
import {
  type AgentInputItem,
  MemorySession,
  type Session,
  type SessionHistoryRewriteAwareSession,
  type SessionHistoryTransactionArgs,
  type SessionHistoryTransactionAwareSession
} from "@openai/agents"
import { afterEach, describe, expect, test } from "vitest"

type Full = Session & SessionHistoryTransactionAwareSession & SessionHistoryRewriteAwareSession

const createUserMessage = (text: string): AgentInputItem => ({
  role: "user",
  content: [{ type: "input_text", text }]
})

const opened: Array<CtxlogSession> = []
afterEach(async () => {
  for (const session of opened.splice(0)) await session.close()
})

const makers: ReadonlyArray<
  readonly [string, (sessionId: string, initialItems?: Array<AgentInputItem>) => Promise<Full>]
> = [
  [
    "MemorySession (the SDK's own)",
    async (sessionId, initialItems) =>
      new MemorySession(initialItems === undefined ? { sessionId } : { sessionId, initialItems })
  ],
  [
    "CtxlogSession",
    async (sessionId, initialItems) => {
      const dir = mkdtempSync(join(tmpdir(), "ctxlog-agents-port-"))
      const session = new CtxlogSession({ sqlite: join(dir, "session.db"), sessionId })
      opened.push(session)
      if (initialItems !== undefined) await session.addItems(initialItems)
      return session
    }
  ]
]

describe.each(makers)("%s", (_name, make) => {
  test("stores and retrieves items", async () => {
    const initialItems = [createUserMessage("hello")]
    const session = await make("session-1", initialItems)

    expect(await session.getSessionId()).toBe("session-1")
    expect(await session.getItems()).toEqual(initialItems)

    const newItems = [createUserMessage("one"), createUserMessage("two")]
    await session.addItems(newItems)
    expect(await session.getItems()).toEqual([...initialItems, ...newItems])

    expect(await session.getItems(2)).toEqual(newItems)

    expect(await session.popItem()).toEqual(newItems[1])
    expect(await session.getItems()).toEqual([...initialItems, newItems[0]])

    await session.clearSession()
    expect(await session.getItems()).toEqual([])
    expect(await session.getItems(3)).toEqual([])
    expect(await session.popItem()).toBeUndefined()
  })

  test("returns clones so external mutations do not persist", async () => {
    const initial = createUserMessage("start")
    const session = await make("session-2", [initial])

    const items = await session.getItems()
    expect(items[0]).not.toBe(initial)
    ;(items[0] as { content: unknown }).content = "mutated"
    expect(await session.getItems()).toEqual([createUserMessage("start")])

    const next = createUserMessage("next")
    await session.addItems([next])
    ;(next as { content: unknown }).content = "mutated"
    expect(await session.getItems()).toEqual([createUserMessage("start"), createUserMessage("next")])

    const popped = await session.popItem()
    expect(popped).toEqual(createUserMessage("next"))
    if (popped) (popped as { content: unknown }).content = "mutated"
    expect(await session.getItems()).toEqual([createUserMessage("start")])
  })

  // The three mutation cases of the 0.17 file pass an `expected` item the 0.20 mutation type no longer
  // has (`{ type: "replace_function_call", callId, replacement }`): at 0.20 the first function call with
  // the call id becomes the replacement and later ones with it go. These check that 0.20 behaviour.
  test("applies history mutations atomically (0.20: the first call with the id is replaced, later ones go)", async () => {
    const first = {
      type: "function_call",
      id: "call-old-1",
      callId: "call-1",
      name: "lookup",
      status: "completed",
      arguments: '{"ok":false}'
    } satisfies AgentInputItem
    const second = { ...first, id: "call-old-2", arguments: '{"duplicate":true}' } satisfies AgentInputItem
    const other = { ...first, id: "call-other", callId: "call-2" } satisfies AgentInputItem
    const session = await make("session-3", [createUserMessage("start"), first, other, second])
    const replacement = { ...first, id: "call-new", arguments: '{"ok":true}' } satisfies AgentInputItem

    await session.applyHistoryMutations({
      mutations: [{ type: "replace_function_call", callId: "call-1", replacement }]
    })

    expect(await session.getItems()).toEqual([createUserMessage("start"), replacement, other])
  })

  test("applies history transactions: append transactions idempotently", async () => {
    const session = await make("session-transaction-append", [createUserMessage("start")])
    const appended = createUserMessage("committed")
    const args = {
      operationId: "operation-append-1",
      transaction: { type: "append_items" as const, items: [appended] }
    }

    await session.applyHistoryTransaction(args)
    ;(appended as { content: unknown }).content = "mutated"
    await session.addItems([createUserMessage("later")])
    await session.applyHistoryTransaction({
      operationId: args.operationId,
      transaction: { type: "append_items", items: [createUserMessage("committed")] }
    })

    expect(await session.getItems()).toEqual([
      createUserMessage("start"),
      createUserMessage("committed"),
      createUserMessage("later")
    ])
  })

  test("replaces an exact history suffix idempotently", async () => {
    const prefix = createUserMessage("start")
    const expected = createUserMessage("blocked")
    const replacement = createUserMessage("accepted")
    const session = await make("session-transaction-replace", [prefix, expected])
    const transaction = {
      operationId: "operation-replace-1",
      transaction: { type: "replace_suffix" as const, expectedSuffix: [expected], replacement: [replacement] }
    }

    await session.applyHistoryTransaction(transaction)
    await session.addItems([createUserMessage("later")])
    await session.applyHistoryTransaction(transaction)

    expect(await session.getItems()).toEqual([prefix, replacement, createUserMessage("later")])
  })

  test("rejects a suffix mismatch without recording the operation", async () => {
    const start = createUserMessage("start")
    const session = await make("session-transaction-precondition", [start])

    await expect(
      session.applyHistoryTransaction({
        operationId: "operation-replace-after-conflict",
        transaction: {
          type: "replace_suffix",
          expectedSuffix: [createUserMessage("different")],
          replacement: [createUserMessage("accepted")]
        }
      })
    ).rejects.toThrow("suffix no longer matches")
    expect(await session.getItems()).toEqual([start])

    await session.applyHistoryTransaction({
      operationId: "operation-replace-after-conflict",
      transaction: { type: "replace_suffix", expectedSuffix: [start], replacement: [createUserMessage("accepted")] }
    })
    expect(await session.getItems()).toEqual([createUserMessage("accepted")])
  })

  test("rejects operation ID reuse with different content", async () => {
    const session = await make("session-transaction-operation-conflict")
    await session.applyHistoryTransaction({
      operationId: "operation-conflict",
      transaction: { type: "append_items", items: [createUserMessage("first")] }
    })

    await expect(
      session.applyHistoryTransaction({
        operationId: "operation-conflict",
        transaction: { type: "append_items", items: [createUserMessage("second")] }
      })
    ).rejects.toThrow("already applied with a different transaction")
    expect(await session.getItems()).toEqual([createUserMessage("first")])
  })

  test("records an empty append transaction", async () => {
    const session = await make("session-transaction-empty-append")
    await session.applyHistoryTransaction({
      operationId: "operation-empty",
      transaction: { type: "append_items", items: [] }
    })

    await expect(
      session.applyHistoryTransaction({
        operationId: "operation-empty",
        transaction: { type: "append_items", items: [createUserMessage("unexpected")] }
      })
    ).rejects.toThrow("already applied with a different transaction")
    expect(await session.getItems()).toEqual([])
  })

  test("resets transaction identities when the session is cleared", async () => {
    const session = await make("session-transaction-reset")
    const transaction = {
      operationId: "operation-after-reset",
      transaction: { type: "append_items" as const, items: [createUserMessage("committed")] }
    }

    await session.applyHistoryTransaction(transaction)
    await session.clearSession()
    await session.applyHistoryTransaction(transaction)

    expect(await session.getItems()).toEqual([createUserMessage("committed")])
  })

  test("rejects invalid transaction input before mutation", async () => {
    const start = createUserMessage("start")
    const session = await make("session-transaction-invalid", [start])

    await expect(
      session.applyHistoryTransaction({ operationId: "   ", transaction: { type: "append_items", items: [] } })
    ).rejects.toThrow("operationId must be a non-empty string")
    await expect(
      session.applyHistoryTransaction({
        operationId: "operation-unknown",
        transaction: { type: "unknown" } as unknown as SessionHistoryTransactionArgs["transaction"]
      })
    ).rejects.toThrow("Unsupported session history transaction type")
    await expect(
      session.applyHistoryTransaction({
        operationId: "operation-missing-transaction",
        transaction: null as unknown as SessionHistoryTransactionArgs["transaction"]
      })
    ).rejects.toThrow("transaction must be an object")
    await expect(
      session.applyHistoryTransaction({
        operationId: "operation-invalid-item",
        transaction: { type: "append_items", items: [42] } as unknown as SessionHistoryTransactionArgs["transaction"]
      })
    ).rejects.toThrow("items contain invalid or unsupported data")
    expect(await session.getItems()).toEqual([start])
  })

  test("rejects unsupported transaction metadata before mutation", async () => {
    const start = createUserMessage("start")
    const session = await make("session-transaction-unsupported", [start])
    const withDate = { ...createUserMessage("unsupported"), providerData: { timestamp: new Date(0) } }
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    const withCycle = { ...createUserMessage("cyclic"), providerData: cycle }
    const withBigInt = { ...createUserMessage("bigint"), providerData: { value: 42n } }
    const sparseItems = new Array<AgentInputItem>(1)

    const unsupportedCases: Array<[string, Array<AgentInputItem>]> = [
      ["operation-date", [withDate]],
      ["operation-cycle", [withCycle]],
      ["operation-bigint", [withBigInt]],
      ["operation-sparse", sparseItems]
    ]
    for (const [operationId, items] of unsupportedCases) {
      await expect(
        session.applyHistoryTransaction({ operationId, transaction: { type: "append_items", items } })
      ).rejects.toThrow("items contain invalid or unsupported data")
    }

    expect(await session.getItems()).toEqual([start])
  })

  test("rejects non-enumerable metadata before mutation", async () => {
    const start = createUserMessage("start")
    const session = await make("session-transaction-non-enumerable", [start])
    const item = createUserMessage("unsupported")
    Object.defineProperty(item, "providerData", { enumerable: false, value: { hidden: true } })

    await expect(
      session.applyHistoryTransaction({
        operationId: "operation-non-enumerable",
        transaction: { type: "append_items", items: [item] }
      })
    ).rejects.toThrow("items contain invalid or unsupported data")
    expect(await session.getItems()).toEqual([start])

    const retryItem = createUserMessage("retry")
    await session.applyHistoryTransaction({
      operationId: "operation-non-enumerable",
      transaction: { type: "append_items", items: [retryItem] }
    })
    expect(await session.getItems()).toEqual([start, retryItem])
  })

  test("rejects unexpected transaction fields before mutation", async () => {
    const start = createUserMessage("start")
    const session = await make("session-transaction-unexpected-fields", [start])

    await expect(
      session.applyHistoryTransaction({
        operationId: "operation-unexpected-append-field",
        transaction: {
          type: "append_items",
          items: [createUserMessage("unsupported")],
          metadata: { attempt: 1 }
        } as unknown as SessionHistoryTransactionArgs["transaction"]
      })
    ).rejects.toThrow("append transaction fields are invalid")
    await expect(
      session.applyHistoryTransaction({
        operationId: "operation-unexpected-suffix-field",
        transaction: {
          type: "replace_suffix",
          expectedSuffix: [start],
          replacement: [createUserMessage("unsupported")],
          metadata: { attempt: 1 }
        } as unknown as SessionHistoryTransactionArgs["transaction"]
      })
    ).rejects.toThrow("suffix transaction fields are invalid")
    expect(await session.getItems()).toEqual([start])

    const retryItem = createUserMessage("retry")
    await session.applyHistoryTransaction({
      operationId: "operation-unexpected-append-field",
      transaction: { type: "append_items", items: [retryItem] }
    })
    expect(await session.getItems()).toEqual([start, retryItem])
  })

  // The SDK's exact message is "…unsupported data."; ctxlog's names where (the path), never the value.
  test("does not expose transaction content in snapshot errors", async () => {
    const session = await make("session-transaction-error-redaction")
    const item = { ...createUserMessage("unsupported"), providerData: { secret: Symbol("api-key-secret") } }

    let error: unknown
    try {
      await session.applyHistoryTransaction({
        operationId: "operation-sensitive-invalid",
        transaction: { type: "append_items", items: [item] }
      })
    } catch (caught) {
      error = caught
    }

    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(/^Session history transaction items contain invalid or unsupported data/)
    expect((error as Error).message).not.toContain("api-key-secret")
    expect(await session.getItems()).toEqual([])
  })

  test("canonicalizes ordinary object prototypes for retries and suffixes", async () => {
    const session = await make("session-transaction-canonical-object")
    const appended = {
      ...createUserMessage("canonical"),
      providerData: Object.assign(Object.create(null), { source: "provider" })
    }

    await session.applyHistoryTransaction({
      operationId: "operation-canonical-append",
      transaction: { type: "append_items", items: [appended] }
    })
    const [roundTripped] = await session.getItems()
    if (roundTripped === undefined) throw new Error("nothing stored")
    await session.applyHistoryTransaction({
      operationId: "operation-canonical-append",
      transaction: { type: "append_items", items: [roundTripped] }
    })
    await session.applyHistoryTransaction({
      operationId: "operation-canonical-replace",
      transaction: {
        type: "replace_suffix",
        expectedSuffix: [appended],
        replacement: [createUserMessage("replaced")]
      }
    })

    expect(await session.getItems()).toEqual([createUserMessage("replaced")])
  })

  test("rejects unsupported cloned values without recording the operation", async () => {
    const typedArrayItem = {
      ...createUserMessage("unsupported-typed-array"),
      providerData: { values: new Uint16Array([300]) }
    }
    const proxiedItems = new Proxy([createUserMessage("proxied")], {})
    const session = await make("session-transaction-unsupported-clones")

    for (const items of [[typedArrayItem], proxiedItems]) {
      await expect(
        session.applyHistoryTransaction({
          operationId: "operation-rejected-clone",
          transaction: { type: "append_items", items }
        })
      ).rejects.toThrow("items contain invalid or unsupported data")
    }

    await session.applyHistoryTransaction({
      operationId: "operation-rejected-clone",
      transaction: { type: "append_items", items: [createUserMessage("accepted-after-rejections")] }
    })
    expect(await session.getItems()).toEqual([createUserMessage("accepted-after-rejections")])
  })

  test("reads the transaction envelope once and redacts accessor errors", async () => {
    const session = await make("session-transaction-envelope")
    let operationIdReads = 0
    const args = {
      transaction: { type: "append_items" as const, items: [createUserMessage("once")] }
    } as SessionHistoryTransactionArgs
    Object.defineProperty(args, "operationId", {
      enumerable: true,
      get: () => {
        operationIdReads++
        return operationIdReads === 1 ? "operation-read-once" : "changed"
      }
    })

    await session.applyHistoryTransaction(args)
    expect(operationIdReads).toBe(1)
    operationIdReads = 0
    await session.applyHistoryTransaction(args)
    expect(operationIdReads).toBe(1)
    expect(await session.getItems()).toEqual([createUserMessage("once")])

    const throwingArgs = {} as SessionHistoryTransactionArgs
    Object.defineProperty(throwingArgs, "operationId", {
      get: () => {
        throw new Error("api-key-secret")
      }
    })
    await expect(session.applyHistoryTransaction(throwingArgs)).rejects.toThrow(
      "Session history transaction arguments are invalid."
    )
    try {
      await session.applyHistoryTransaction(throwingArgs)
    } catch (error) {
      expect((error as Error).message).not.toContain("api-key-secret")
    }
  })
})
