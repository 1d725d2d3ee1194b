/**
 * Ported from openai/openai-agents-js at commit 6d0c61a5f62a5ed8142996a25b33446c810f84b3 (the newest
 * commit of that repository we can read; the installed `@openai/agents` is 0.20.0). MIT licence,
 * Copyright (c) OpenAI. Three files, each case run on the SDK's own `MemorySession` AND on our
 * `CtxlogSession` (imported as users import it; the packed-tarball test runs this file in a project
 * that installed our tarballs), the model being the SDK's own test model (`ScriptedModel` of
 * `@openai/agents/testing`):
 *
 * - packages/agents-core/test/hitlMemorySessionScenario.test.ts: approvals, rehydration, rejections
 *   across tools (`needsApproval` → `interruptions` → `state.approve` / `state.reject` → `run(agent,
 *   state, { session })`); CtxlogSession also hands the model the rendered window (its filter).
 * - packages/agents-core/test/session.test.ts: the session type guards, on CtxlogSession.
 * - packages/agents-openai/test/openaiResponsesCompactionSession.test.ts: the cases about the
 *   underlying session, with CtxlogSession underneath `OpenAIResponsesCompactionSession` and a
 *   recording `client.responses.compact` (the recordings must equal those with `MemorySession`
 *   underneath); plus a compaction whose output is the Responses `compaction` marker, after which the
 *   session holds the compacted context and the next model call gets it.
 *
 * The cases not run, and why, are listed in packages/integrations/README.md ("Ported tests").
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CtxlogSession } from "@ctxlog/integrations/openai-agents"
import {
  Agent,
  type AgentInputItem,
  type CallModelInputFilter,
  isOpenAIResponsesCompactionAwareSession,
  isSessionHistoryRewriteAwareSession,
  isSessionHistoryTransactionAwareSession,
  MemorySession,
  type ModelRequest,
  OpenAIResponsesCompactionSession,
  type protocol,
  run,
  type Session,
  setTracingDisabled,
  tool,
  Usage
} from "@openai/agents"
import { assistantMessage, modelResponder, ScriptedModel } from "@openai/agents/testing"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"

setTracingDisabled(true)

const opened: Array<CtxlogSession> = []
afterEach(async () => {
  for (const session of opened.splice(0)) await session.close()
})

const tempDb = () => join(mkdtempSync(join(tmpdir(), "ctxlog-agents-run-port-")), "session.db")

/** A session of each kind: the session, its rehydration on the same storage, and the filter to run with. */
interface Kind {
  readonly name: string
  readonly make: (sessionId: string, initialItems?: Array<AgentInputItem>) => Promise<Session>
  readonly rehydrate: (session: Session, items: Array<AgentInputItem>) => Promise<Session>
  readonly filter: (session: Session) => CallModelInputFilter | undefined
}

const kinds: ReadonlyArray<Kind> = [
  {
    name: "MemorySession (the SDK's own)",
    make: async (sessionId, initialItems) =>
      new MemorySession(initialItems === undefined ? { sessionId } : { sessionId, initialItems }),
    rehydrate: async (session, items) =>
      new MemorySession({ sessionId: await session.getSessionId(), initialItems: items }),
    filter: () => undefined
  },
  (() => {
    const files = new Map<string, string>()
    return {
      name: "CtxlogSession",
      make: async (sessionId: string, initialItems?: Array<AgentInputItem>) => {
        const sqlite = tempDb()
        const session = new CtxlogSession({ sqlite, sessionId })
        files.set(sessionId, sqlite)
        opened.push(session)
        if (initialItems !== undefined) await session.addItems(initialItems)
        return session
      },
      // Another process opens the same file: the items come back from the log.
      rehydrate: async (session: Session) => {
        const sessionId = await session.getSessionId()
        const again = new CtxlogSession({ sqlite: files.get(sessionId) ?? "", sessionId })
        opened.push(again)
        return again
      },
      filter: (session: Session) => (session as CtxlogSession).callModelInputFilter
    }
  })()
]

// --- hitlMemorySessionScenario.test.ts ---------------------------------------------------------

const TOOL_ECHO = "approved_echo"
const TOOL_NOTE = "approved_note"
const REJECTION_OUTPUT = "Tool execution was not approved."
const USER_MESSAGES = [
  "Fetch profile for customer 104.",
  "Update note for customer 104.",
  "Delete note for customer 104."
]

const executeCounts = new Map<string, number>()

const approvalEchoTool = tool({
  name: TOOL_ECHO,
  description: "Echoes back the provided query after approval.",
  parameters: z.object({ query: z.string() }),
  async execute({ query }: { query: string }) {
    executeCounts.set(TOOL_ECHO, (executeCounts.get(TOOL_ECHO) ?? 0) + 1)
    return `approved:${query}`
  }
})
approvalEchoTool.needsApproval = async () => true

const approvalNoteTool = tool({
  name: TOOL_NOTE,
  description: "Records the provided query after approval.",
  parameters: z.object({ query: z.string() }),
  async execute({ query }: { query: string }) {
    executeCounts.set(TOOL_NOTE, (executeCounts.get(TOOL_NOTE) ?? 0) + 1)
    return `approved_note:${query}`
  }
})
approvalNoteTool.needsApproval = async () => true

interface ScenarioStep {
  readonly label: string
  readonly message: string
  readonly toolName: string
  readonly approval: "approve" | "reject"
  readonly expectedOutput: string
}

const extractUserMessage = (input: ModelRequest["input"]): string => {
  if (typeof input === "string") return input
  for (let index = input.length - 1; index >= 0; index -= 1) {
    const item = input[index]
    if (item?.type === "message" && item.role === "user") {
      if (typeof item.content === "string") return item.content
      const text = item.content.map((part) => (part.type === "input_text" ? part.text : "")).join("")
      if (text) return text
    }
  }
  return ""
}

const createScenarioModel = (): ScriptedModel =>
  new ScriptedModel(
    USER_MESSAGES.map(() =>
      modelResponder((call) => {
        const request = call.request
        const toolName =
          typeof request.modelSettings.toolChoice === "string" ? request.modelSettings.toolChoice : TOOL_ECHO
        const callId = `call_${call.index}`
        const toolCall: protocol.FunctionCallItem = {
          id: `fc_${callId}`,
          type: "function_call",
          name: toolName,
          callId,
          status: "completed",
          arguments: JSON.stringify({ query: extractUserMessage(request.input) }),
          providerData: {}
        }
        return { usage: new Usage(), output: [toolCall] }
      })
    )
  )

const count = (items: Array<AgentInputItem>, predicate: (item: AgentInputItem) => boolean) =>
  items.filter(predicate).length
const isCall = (item: AgentInputItem): item is protocol.FunctionCallItem => item.type === "function_call"
const isResult = (item: AgentInputItem): item is protocol.FunctionCallResultItem => item.type === "function_call_result"
const isUser = (item: AgentInputItem) => item.type === "message" && item.role === "user"

const outputText = (result: protocol.FunctionCallResultItem | undefined): string | undefined => {
  const output = result?.output
  if (typeof output === "string") return output
  if (Array.isArray(output)) {
    const text = output.find((entry) => entry.type === "input_text")
    return text?.type === "input_text" ? text.text : undefined
  }
  return output !== undefined && output.type === "text" ? output.text : undefined
}

const lastUserText = (items: Array<AgentInputItem>): string | undefined => {
  const user = items.findLast(isUser)
  if (user === undefined || user.type !== "message" || user.role !== "user") return undefined
  return typeof user.content === "string"
    ? user.content
    : user.content.map((part) => (part.type === "input_text" ? part.text : "")).join("")
}

describe.each(kinds)("$name: run with a session", (kind) => {
  const runScenarioStep = async (session: Session, model: ScriptedModel, step: ScenarioStep) => {
    const agent = new Agent({
      name: `Session ${step.label}`,
      instructions: `Always call ${step.toolName} before responding.`,
      model,
      tools: [approvalEchoTool, approvalNoteTool],
      modelSettings: { toolChoice: step.toolName },
      toolUseBehavior: "stop_on_first_tool"
    })
    const filter = kind.filter(session)
    const options = filter === undefined ? { session } : { session, callModelInputFilter: filter }

    const firstRun = await run(agent, step.message, options)
    expect(firstRun.interruptions).toHaveLength(1)
    // The paused history reads back (a call waiting for approval, no result yet).
    expect((await session.getItems()).at(-1)?.type).toBe("function_call")

    const approval = firstRun.interruptions[0]
    if (approval === undefined) throw new Error("no interruption")
    if (step.approval === "reject") firstRun.state.reject(approval)
    else firstRun.state.approve(approval)

    const resumed = await run(agent, firstRun.state, options)
    expect(resumed.interruptions).toHaveLength(0)
    expect(resumed.finalOutput).toBe(step.expectedOutput)
    return { approvalItem: approval.rawItem as protocol.FunctionCallItem, items: await session.getItems() }
  }

  const expectCounts = (items: Array<AgentInputItem>, turn: number) => {
    expect(count(items, isUser)).toBe(turn)
    expect(count(items, isCall)).toBe(turn)
    expect(count(items, isResult)).toBe(turn)
  }

  const expectStepOutput = (
    items: Array<AgentInputItem>,
    approvalItem: protocol.FunctionCallItem,
    step: ScenarioStep
  ) => {
    expect(lastUserText(items)).toBe(step.message)
    const lastCall = items.findLast(isCall)
    const lastResult = items.findLast(isResult)
    expect(lastCall?.name).toBe(step.toolName)
    expect(lastResult?.name).toBe(step.toolName)
    expect(lastCall?.callId).toBe(approvalItem.callId)
    expect(lastResult?.callId).toBe(approvalItem.callId)
    expect(outputText(lastResult)).toBe(step.expectedOutput)
  }

  it("persists approvals, rehydration, and rejections across tools", async () => {
    executeCounts.clear()
    const session = await kind.make("hitl-session")
    const model = createScenarioModel()
    const steps: ReadonlyArray<ScenarioStep> = [
      {
        label: "turn 1",
        message: USER_MESSAGES[0] ?? "",
        toolName: TOOL_ECHO,
        approval: "approve",
        expectedOutput: `approved:${USER_MESSAGES[0]}`
      },
      {
        label: "turn 2 (rehydrated)",
        message: USER_MESSAGES[1] ?? "",
        toolName: TOOL_NOTE,
        approval: "approve",
        expectedOutput: `approved_note:${USER_MESSAGES[1]}`
      },
      {
        label: "turn 3 (rejected)",
        message: USER_MESSAGES[2] ?? "",
        toolName: TOOL_ECHO,
        approval: "reject",
        expectedOutput: REJECTION_OUTPUT
      }
    ]
    const [one, two, three] = steps
    if (one === undefined || two === undefined || three === undefined) throw new Error("three steps")

    const first = await runScenarioStep(session, model, one)
    expectCounts(first.items, 1)
    expectStepOutput(first.items, first.approvalItem, one)

    const rehydrated = await kind.rehydrate(session, first.items)
    expect(await rehydrated.getItems()).toEqual(first.items)
    const second = await runScenarioStep(rehydrated, model, two)
    expectCounts(second.items, 2)
    expectStepOutput(second.items, second.approvalItem, two)

    const third = await runScenarioStep(rehydrated, model, three)
    expectCounts(third.items, 3)
    expectStepOutput(third.items, third.approvalItem, three)

    expect(executeCounts.get(TOOL_ECHO)).toBe(1)
    expect(executeCounts.get(TOOL_NOTE)).toBe(1)
    await rehydrated.clearSession()
    expect(await rehydrated.getItems()).toEqual([])
  })
})

// --- session.test.ts ---------------------------------------------------------------------------

describe("session type guards, on CtxlogSession", () => {
  it("detects OpenAI Responses compaction-aware, history rewrite-aware and history transaction-aware sessions", async () => {
    const session = new CtxlogSession({ sqlite: tempDb(), sessionId: "guards" })
    opened.push(session)
    expect(isOpenAIResponsesCompactionAwareSession(session)).toBe(true)
    expect(isSessionHistoryRewriteAwareSession(session)).toBe(true)
    expect(isSessionHistoryTransactionAwareSession(session)).toBe(true)
  })
})

// --- openaiResponsesCompactionSession.test.ts (the cases about the underlying session) ---------

interface CompactCall {
  readonly request: unknown
}

/** A `client.responses.compact` that records its requests and answers from a script. */
const compactClient = (outputs: ReadonlyArray<ReadonlyArray<AgentInputItem>>) => {
  const calls: Array<CompactCall> = []
  const client = {
    responses: {
      compact: async (request: unknown) => {
        calls.push({ request: structuredClone(request) })
        const output = outputs[calls.length - 1] ?? []
        return { output, usage: { input_tokens: 2, output_tokens: 3, total_tokens: 5 } }
      }
    }
  }
  // The SDK types the client as the `openai` package's; only `responses.compact` is used.
  return {
    calls,
    client: client as unknown as NonNullable<
      ConstructorParameters<typeof OpenAIResponsesCompactionSession>[0]["client"]
    >
  }
}

const assistant = (text: string): AgentInputItem => ({
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }]
})

const previousResponseId = (call: CompactCall | undefined): unknown =>
  (call?.request as { readonly previous_response_id?: string } | undefined)?.previous_response_id

/** Each case's recordings: what the hook saw, what `compact` was asked, what the session held. */
type Observation = ReadonlyArray<unknown>

const compactionCases: ReadonlyArray<readonly [string, (underlying: Session) => Promise<Observation>]> = [
  [
    "delegates session identity and keeps cached candidates in sync",
    async (underlyingSession) => {
      const assistantItem = assistant("first answer")
      const followUpItem = assistant("follow-up answer")
      await underlyingSession.addItems([{ type: "message", role: "user", content: "hello" }, assistantItem])
      const candidateSnapshots: Array<Array<AgentInputItem>> = []
      const { calls, client } = compactClient([])
      const session = new OpenAIResponsesCompactionSession({
        client,
        underlyingSession,
        shouldTriggerCompaction: ({ compactionCandidateItems }) => {
          candidateSnapshots.push(compactionCandidateItems)
          return false
        }
      })
      const observed: Array<unknown> = []
      observed.push(await session.getItems(1))
      await session.addItems([])
      observed.push(await session.runCompaction({ responseId: "resp_1" }))
      await session.addItems([followUpItem])
      observed.push(await session.popItem())
      observed.push(await session.runCompaction())
      await session.clearSession()
      observed.push(await session.popItem())
      observed.push(await session.runCompaction())
      expect(candidateSnapshots).toEqual([[assistantItem], [assistantItem], []])
      expect(observed).toEqual([[assistantItem], null, followUpItem, null, undefined, null])
      expect(await session.getItems()).toEqual([])
      return [candidateSnapshots, observed, calls]
    }
  ],
  [
    "uses the default compaction threshold for candidate items (ten assistant items, none merged)",
    async (underlyingSession) => {
      const { calls, client } = compactClient([[]])
      const session = new OpenAIResponsesCompactionSession({ client, underlyingSession, compactionMode: "input" })
      await session.addItems(Array.from({ length: 10 }, (_, index) => assistant(`answer ${index}`)))
      const result = await session.runCompaction()
      expect(result).not.toBeNull()
      expect(calls).toHaveLength(1)
      return [result, calls]
    }
  ],
  [
    "skips compaction when the decision hook declines",
    async (underlyingSession) => {
      const { calls, client } = compactClient([])
      const session = new OpenAIResponsesCompactionSession({
        client,
        underlyingSession,
        shouldTriggerCompaction: () => false
      })
      await session.addItems([assistant("hello")])
      await session.runCompaction({ responseId: "resp_1" })
      expect(calls).toHaveLength(0)
      return [calls]
    }
  ],
  [
    "compacts using input mode without a response id",
    async (underlyingSession) => {
      const { calls, client } = compactClient([[]])
      const session = new OpenAIResponsesCompactionSession({ client, underlyingSession, compactionMode: "input" })
      await session.addItems([{ type: "message", role: "user", content: "hello" }, assistant("world")])
      await session.runCompaction({ force: true })
      expect(calls).toHaveLength(1)
      const request = calls[0]?.request as {
        readonly previous_response_id?: string
        readonly input: ReadonlyArray<unknown>
      }
      expect(request.previous_response_id).toBeUndefined()
      expect(request.input).toHaveLength(2)
      expect(request.input[0]).toMatchObject({ role: "user", content: "hello" })
      expect(request.input[1]).toMatchObject({ type: "message", role: "assistant" })
      return [calls]
    }
  ],
  [
    "defaults to auto compaction and uses input without a response id",
    async (underlyingSession) => {
      const { calls, client } = compactClient([[]])
      const session = new OpenAIResponsesCompactionSession({ client, underlyingSession })
      await session.addItems([{ type: "message", role: "user", content: "hello" }])
      await session.runCompaction({ force: true })
      expect(calls).toHaveLength(1)
      const request = calls[0]?.request as {
        readonly previous_response_id?: string
        readonly input: ReadonlyArray<unknown>
      }
      expect(request.previous_response_id).toBeUndefined()
      expect(request.input).toHaveLength(1)
      return [calls]
    }
  ],
  [
    "auto mode uses input when store is false",
    async (underlyingSession) => {
      const { calls, client } = compactClient([[]])
      const session = new OpenAIResponsesCompactionSession({ client, underlyingSession, compactionMode: "auto" })
      await session.addItems([{ type: "message", role: "user", content: "hello" }, assistant("world")])
      await session.runCompaction({ responseId: "resp_auto", store: false, force: true })
      expect(calls).toHaveLength(1)
      const request = calls[0]?.request as {
        readonly previous_response_id?: string
        readonly input: ReadonlyArray<unknown>
      }
      expect(request.previous_response_id).toBeUndefined()
      expect(request.input).toHaveLength(2)
      return [calls]
    }
  ],
  [
    "auto mode remembers store settings when store is omitted",
    async (underlyingSession) => {
      const { calls, client } = compactClient([[assistant("compacted output")], [assistant("compacted output")]])
      const session = new OpenAIResponsesCompactionSession({ client, underlyingSession, compactionMode: "auto" })
      await session.addItems([{ type: "message", role: "user", content: "hello" }, assistant("world")])
      await session.runCompaction({ responseId: "resp_auto", store: false, force: true })
      await session.runCompaction({ force: true })
      expect(calls).toHaveLength(2)
      const [first, second] = calls.map(
        (call) => call.request as { readonly previous_response_id?: string; readonly input: ReadonlyArray<unknown> }
      )
      expect(first?.previous_response_id).toBeUndefined()
      expect(second?.previous_response_id).toBeUndefined()
      expect(second?.input).toHaveLength(1)
      return [calls]
    }
  ],
  [
    "allows custom compaction decisions using the stored history",
    async (underlyingSession) => {
      const { calls, client } = compactClient([[assistant("compacted output")], [assistant("compacted output")]])
      const decisionHistoryLengths: Array<number> = []
      const session = new OpenAIResponsesCompactionSession({
        client,
        underlyingSession,
        shouldTriggerCompaction: async ({ compactionCandidateItems }) => {
          decisionHistoryLengths.push(compactionCandidateItems.length)
          const estimatedTokens = compactionCandidateItems.reduce(
            (total, item) => total + JSON.stringify(item).length,
            0
          )
          return estimatedTokens > 40
        }
      })
      await session.addItems([assistant("This reply is intentionally long to trigger compaction.")])
      await session.runCompaction({ responseId: "resp_2" })
      expect(calls).toHaveLength(1)
      expect(previousResponseId(calls[0])).toBe("resp_2")
      expect(decisionHistoryLengths).toEqual([1])
      const storedItems = await session.getItems()
      expect(storedItems).toEqual([assistant("compacted output")])
      const compactionResult = await session.runCompaction({ responseId: "resp_2", force: true })
      expect(compactionResult?.usage).toMatchObject({ inputTokens: 2, outputTokens: 3, totalTokens: 5 })
      return [calls, decisionHistoryLengths, storedItems, compactionResult]
    }
  ],
  [
    "provides compaction candidates to the decision hook",
    async (underlyingSession) => {
      const { calls, client } = compactClient([])
      const receivedCandidates: Array<Array<unknown>> = []
      const session = new OpenAIResponsesCompactionSession({
        client,
        underlyingSession,
        shouldTriggerCompaction: async ({ compactionCandidateItems }) => {
          receivedCandidates.push(compactionCandidateItems)
          return false
        }
      })
      const userItem: AgentInputItem = {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "hello" }]
      }
      const assistantItem = assistant("world")
      await session.addItems([userItem, assistantItem])
      await session.runCompaction({ responseId: "resp_3" })
      expect(receivedCandidates).toEqual([[assistantItem]])
      expect(calls).toHaveLength(0)
      return [receivedCandidates]
    }
  ],
  [
    "replaces history after compaction and reuses the stored response id",
    async (underlyingSession) => {
      const { calls, client } = compactClient([[assistant("compacted output")], [assistant("second pass")]])
      const session = new OpenAIResponsesCompactionSession({ client, underlyingSession })
      await session.addItems([
        { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
        assistant("first output")
      ])
      await session.runCompaction({ responseId: "resp_store", force: true })
      expect(previousResponseId(calls[0])).toBe("resp_store")
      const afterFirst = await session.getItems()
      expect(afterFirst).toEqual([assistant("compacted output")])
      await session.addItems([assistant("follow up")])
      await session.runCompaction({ force: true })
      expect(calls).toHaveLength(2)
      expect(previousResponseId(calls[1])).toBe("resp_store")
      const afterSecond = await session.getItems()
      expect(afterSecond).toEqual([assistant("second pass")])
      return [calls, afterFirst, afterSecond]
    }
  ],
  [
    "a compaction answered by the Responses `compaction` marker: the session holds the compacted context",
    async (underlyingSession) => {
      const marker: AgentInputItem = { type: "compaction", id: "cmp_1", encrypted_content: "gAAAAB-compacted" }
      const retained: AgentInputItem = {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "Keep going." }]
      }
      const { client } = compactClient([[marker, retained]])
      const session = new OpenAIResponsesCompactionSession({ client, underlyingSession, compactionMode: "input" })
      await session.addItems([{ type: "message", role: "user", content: "Start." }, assistant("Started.")])
      await session.runCompaction({ force: true })
      const held = await underlyingSession.getItems()
      expect(held).toEqual([marker, retained])
      return [held]
    }
  ]
]

describe("OpenAIResponsesCompactionSession over CtxlogSession records what it does over MemorySession", () => {
  for (const [name, body] of compactionCases) {
    it(name, async () => {
      const [memory, ctxlog] = kinds
      if (memory === undefined || ctxlog === undefined) throw new Error("two kinds")
      const expected = await body(await memory.make(`compaction-${name}`))
      const actual = await body(await ctxlog.make(`compaction-${name}`))
      expect(actual).toEqual(expected)
    })
  }

  it("after the SDK rewrites history from the marker, the next model call gets the compacted context", async () => {
    const underlying = new CtxlogSession({ sqlite: tempDb(), sessionId: "marker-run" })
    opened.push(underlying)
    const marker: AgentInputItem = { type: "compaction", id: "cmp_1", encrypted_content: "gAAAAB-compacted" }
    const { client } = compactClient([[marker]])
    const session = new OpenAIResponsesCompactionSession({
      client,
      underlyingSession: underlying,
      compactionMode: "input"
    })
    const model = new ScriptedModel([
      [assistantMessage("First.", { id: "msg_1" })],
      [assistantMessage("Second.", { id: "msg_2" })]
    ])
    const agent = new Agent({ name: "compacting", instructions: "Be brief.", model })
    const options = { session, callModelInputFilter: underlying.callModelInputFilter }
    await run(agent, "One.", options)
    await session.runCompaction({ force: true })
    expect(await underlying.getItems()).toEqual([marker])
    await run(agent, "Two.", options)
    const input = model.calls[1]?.request.input
    expect(input).toEqual([marker, { type: "message", role: "user", content: "Two." }])
  })
})
