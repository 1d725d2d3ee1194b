// Issue 37 item 6, "count what is sent": over the repository's real transcripts (fixtures/transcripts, and
// the real Claude Code sessions and Codex rollouts of fixtures/sessions; provenance in their READMEs) run
// through the turn at an 8k window, the prompt tokens the turn counts for each render (`stats.total` plus
// the reminder: what the fit and the tiers compare) are set against the tokens of what the builder sent,
// counted in the request itself with the same tokenizer (o200k_base) and the same per-message framing.
// The figures (printed by this test) are in BENCHMARKS.md.
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ContextService, type Message, TokenCounter, Transcript } from "@ctxlog/core"
import type { CtxBuilder } from "@ctxlog/providers"
import { type Policy, TemplateCompactor, Turn } from "@ctxlog/turn"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ClaudeCode from "../src/importers/ClaudeCode.js"
import * as Codex from "../src/importers/Codex.js"
import type * as Session from "../src/importers/Session.js"
import * as Pipeline from "../src/Pipeline.js"
import { transcripts } from "./support/cli.js"

const sessions = fileURLToPath(new URL("../../../fixtures/sessions/", import.meta.url))
const counter = TokenCounter.gpt("o200k_base")
const contextWindow = 8192

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
const str = (value: unknown): string => (typeof value === "string" ? value : "")

/** An image as a request sends it (a data URL, or a URL), as the part the counter prices. */
const imageOf = (url: string, detail: unknown): Message.ImagePart => {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url)
  const source: Message.MediaSource =
    data === null ? { type: "url", url } : { type: "base64", mediaType: data[1] ?? "", data: data[2] ?? "" }
  return detail === "low" || detail === "high" || detail === "auto"
    ? { type: "image", source, detail }
    : { type: "image", source }
}

/** Tokens of the images of the request being counted (by the counter's formula, as the window prices them). */
let media = 0
const priced = (image: Message.ImagePart): ReadonlyArray<string> => {
  media += counter.countMessage({ parts: [image] }) - TokenCounter.messageOverhead
  return []
}

/** The text of one block of a request message, as the window counts its part (images priced apart). */
const blockText = (block: unknown): ReadonlyArray<string> => {
  if (typeof block === "string") return [block]
  if (!isRecord(block)) return []
  switch (block.type) {
    case "image": {
      const source = isRecord(block.source) ? block.source : {}
      return priced(
        imageOf(
          source.type === "url" ? str(source.url) : `data:${str(source.media_type)};base64,${str(source.data)}`,
          undefined
        )
      )
    }
    case "image_url": {
      const image = isRecord(block.image_url) ? block.image_url : {}
      return priced(imageOf(str(image.url), image.detail))
    }
    case "input_image":
      return priced(imageOf(str(block.image_url), block.detail))
    case "text":
    case "input_text":
    case "output_text":
      return [str(block.text)]
    case "thinking":
      return [str(block.thinking)]
    case "tool_use":
      return [`${str(block.name)} ${JSON.stringify(block.input)}`]
    case "tool_result":
      return typeof block.content === "string" ? [block.content] : list(block.content).flatMap(blockText)
    default:
      return []
  }
}

/** Tokens of one request message (or item): its texts joined by line breaks, plus the per-message framing. */
const messageTokens = (texts: ReadonlyArray<string>): number =>
  counter.count(texts.filter((text) => text.length > 0).join("\n")) + TokenCounter.messageOverhead

/** The tokens of what a request sends: system, messages or input items, counted where they are. */
const requestTokens = (request: unknown): number => {
  if (!isRecord(request)) return 0
  media = 0
  let total = 0
  // Anthropic: system blocks, then messages with content blocks.
  for (const block of list(request.system)) total += messageTokens(blockText(block))
  for (const message of list(request.messages)) {
    if (!isRecord(message)) continue
    const texts = typeof message.content === "string" ? [message.content] : list(message.content).flatMap(blockText)
    // Chat Completions: tool calls as name and arguments.
    for (const call of list(message.tool_calls)) {
      const fn = isRecord(call) && isRecord(call.function) ? call.function : {}
      texts.push(`${str(fn.name)} ${str(fn.arguments)}`)
    }
    total += messageTokens(texts)
  }
  // Responses: an assistant's reasoning, text and calls are items of one window message; framing per message.
  let pending: Array<string> = []
  const flush = () => {
    if (pending.length > 0) total += messageTokens(pending)
    pending = []
  }
  for (const item of list(request.input)) {
    if (!isRecord(item)) continue
    if (item.type === "reasoning") pending.push(...list(item.summary).flatMap(blockText))
    else if (item.type === "function_call") pending.push(`${str(item.name)} ${str(item.arguments)}`)
    else if (item.type === "function_call_output") {
      flush()
      total += messageTokens(typeof item.output === "string" ? [item.output] : list(item.output).flatMap(blockText))
    } else {
      const texts = typeof item.content === "string" ? [item.content] : list(item.content).flatMap(blockText)
      if (item.role === "assistant") pending.push(...texts)
      else {
        flush()
        total += messageTokens(texts)
      }
    }
  }
  flush()
  if (typeof request.instructions === "string") total += messageTokens([request.instructions])
  return total + media
}

/** A session read by an importer, as one message list (its calls' answers as assistant messages). */
const messagesOf = (session: Session.Session): ReadonlyArray<Message.MessageInput> =>
  session.steps.flatMap((step): ReadonlyArray<Message.MessageInput> => {
    if (step._tag === "Messages") return step.messages
    if (step._tag === "Call") return [{ role: "assistant", parts: step.answer }]
    return []
  })

interface Source {
  readonly name: string
  readonly builder: CtxBuilder.ProviderConfig
  readonly messages: ReadonlyArray<Message.MessageInput>
}

const chat = (model: string): CtxBuilder.ProviderConfig => ({ provider: "openai", model, contextWindow })
const anthropic: CtxBuilder.ProviderConfig = { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow }
const responses: CtxBuilder.ProviderConfig = { provider: "openai", api: "responses", model: "gpt-5", contextWindow }

const sources = Effect.gen(function* () {
  const out: Array<Source> = []
  for (const file of readdirSync(transcripts)
    .filter((name) => name.endsWith(".json"))
    .sort()) {
    const json: unknown = JSON.parse(readFileSync(join(transcripts, file), "utf8"))
    const messages = yield* Transcript.fromOpenAIChat(list(isRecord(json) ? json.messages : []))
    out.push({ name: file, builder: anthropic, messages })
    out.push({ name: file, builder: chat("gpt-4o"), messages })
  }
  for (const file of readdirSync(join(sessions, "claude-code")).sort()) {
    const read = yield* ClaudeCode.read(file, readFileSync(join(sessions, "claude-code", file), "utf8"))
    for (const session of read.sessions) {
      out.push({ name: session.stream, builder: anthropic, messages: messagesOf(session) })
      out.push({ name: session.stream, builder: chat("gpt-4o"), messages: messagesOf(session) })
    }
  }
  for (const file of readdirSync(join(sessions, "codex")).sort()) {
    const read = yield* Codex.read(file, readFileSync(join(sessions, "codex", file), "utf8"))
    for (const session of read.sessions) {
      out.push({ name: session.stream.slice(0, 32), builder: responses, messages: messagesOf(session) })
      out.push({ name: session.stream.slice(0, 32), builder: chat("gpt-4o"), messages: messagesOf(session) })
    }
  }
  return out
})

/** Counted and sent tokens of every render of a source run through the turn. */
interface Measured {
  readonly renders: number
  /** Σ counted (what the turn compares), Σ sent, Σ the window's own count (reasoning included). */
  readonly counted: number
  readonly sent: number
  readonly windowCount: number
  /** The largest |counted − sent| / sent of one render. */
  readonly worst: number
}

const measure = (source: Source) =>
  Effect.gen(function* () {
    const policy: Policy.Policy = { builder: source.builder, compaction: {} }
    const stream = "sent"
    let renders = 0
    let counted = 0
    let sent = 0
    let windowCount = 0
    let worst = 0
    for (const turn of Pipeline.turnsOf(source.messages).turns) {
      const ctx = yield* ContextService.ContextService
      if (turn.system !== undefined) yield* ctx.setSystemPrompt(stream, turn.system)
      yield* Turn.prepare(stream, { messages: turn.messages }, policy)
      for (const [iteration, call] of turn.calls.entries()) {
        const rendered = yield* Turn.render(stream, policy, { iteration })
        const stats = rendered.built.stats
        const mine = stats.total + stats.reminderTokens
        const theirs = requestTokens(rendered.built.request) + stats.toolTokens + stats.reminderTokens
        renders++
        counted += mine
        sent += theirs
        windowCount += mine + stats.unsentTokens
        worst = Math.max(worst, Math.abs(mine - theirs) / theirs)
        yield* Turn.complete(
          stream,
          { answer: call.answer, results: call.results, endTurn: iteration === turn.calls.length - 1 },
          policy
        )
      }
    }
    return { renders, counted, sent, windowCount, worst } satisfies Measured
  }).pipe(
    Effect.provide(
      Layer.merge(
        ContextService.layerMemory({ tokenCounter: Layer.succeed(TokenCounter.TokenCounter, counter) }),
        TemplateCompactor.layer({ maxBytes: 2048 })
      )
    )
  )

const pct = (a: number, b: number) => `${((100 * (a - b)) / b).toFixed(1)}%`

describe("the turn counts what the builder sends (issue 37 item 6)", () => {
  it.effect(
    "over the real transcripts and sessions at an 8k window, counted prompt tokens are within 3% of the sent ones",
    () =>
      Effect.gen(function* () {
        const all = yield* sources
        assert.isAtLeast(all.length, 20)
        const lines: Array<string> = []
        let counted = 0
        let sent = 0
        let windowCount = 0
        const failures: Array<string> = []
        for (const source of all) {
          const m = yield* measure(source)
          assert.isAbove(m.renders, 0, source.name)
          counted += m.counted
          sent += m.sent
          windowCount += m.windowCount
          const label = `${source.builder.provider}${"api" in source.builder && source.builder.api === "responses" ? "-responses" : ""}`
          lines.push(
            `${source.name} [${label}]: ${m.renders} renders, counted ${pct(m.counted, m.sent)} of sent ` +
              `(worst render ${(100 * m.worst).toFixed(1)}%), the window's own count ${pct(m.windowCount, m.sent)}`
          )
          if (Math.abs(m.counted - m.sent) > 0.03 * m.sent) failures.push(source.name)
        }
        lines.push(`all: counted ${pct(counted, sent)} of sent; the window's own count ${pct(windowCount, sent)}`)
        console.log(lines.join("\n"))
        // Each source: the turn's count over its renders within 3% of what was sent.
        assert.deepStrictEqual(failures, [])
      }),
    600_000
  )
})
