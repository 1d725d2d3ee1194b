/**
 * `ctxlog-agent demo`: the real agent loop, offline, on a copy of a bundled sample project with a real
 * bug and a failing test. A scripted plan plays the model: ~40 user turns of exploration with large
 * real tool outputs (a 60 KB catalog, a 130 KB order log, searches, test runs) in a 16K window, so the
 * window goes through truncation, pruning, deferred summaries, soft, hard and proactive compaction,
 * trimming and seams; then the bug is fixed from what the model read, and `node --test` passes. At the
 * end: a summary table from the log, and the inspector commands to look at the run.
 *
 * @since 0.1.0
 */
import { execFileSync } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { EventHash, EventLog, type LanguageModel, Message } from "@ctxlog/core"
import { FileStore, RecallIndex } from "@ctxlog/memory"
import type { OfflineModel } from "@ctxlog/providers"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Agent from "./Agent.js"
import * as Invocation from "./Invocation.js"
import { compactionTypes, newSessionId, readNotes } from "./Sessions.js"
import * as Provider from "./Provider.js"
import * as Stack from "./Stack.js"
import * as Tools from "./Tools.js"
import { fold, tableWrappingLast, type Ui } from "./Ui.js"
import * as Workspace from "./Workspace.js"

/** The demo model's context window: small, so a few large tool outputs fill it. @since 0.1.0 */
export const contextWindow = 16_384
/** The demo's output reserve. @since 0.1.0 */
export const outputReserve = 1024

/** The bundled sample project (beside `src/` and `dist/` alike). @since 0.1.0 */
export const sampleDir = fileURLToPath(new URL("../sample/tiny-shop", import.meta.url))

/** A scripted model reply, fixed or computed from the request the model receives. */
type Step = OfflineModel.Reply | ((request: LanguageModel.ModelRequest) => OfflineModel.Reply)

/** One user turn of the plan and what the model does in it. */
interface PlanTurn {
  readonly user: string
  readonly steps: ReadonlyArray<Step>
}

const call = (name: string, input: Message.JsonValue): OfflineModel.Reply => ({ toolCalls: [{ name, input }] })
const say = (text: string): OfflineModel.Reply => ({ text })
// A tool input is a JSON value: no undefined in it.
const read = (file: string, start?: number, end?: number) =>
  call("read_file", { path: file, ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) })
const search = (pattern: string, where = ".") => call("search", { pattern, path: where })
const sh = (command: string) => call("run_command", { command })

/** The newest tool result the model was sent. */
const lastResult = (request: LanguageModel.ModelRequest): string => {
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index]
    const result = message === undefined ? undefined : Message.toolResultsOf(message)[0]
    if (result !== undefined) return result.content
  }
  return ""
}

/** The fix, made from the file as the model read it: the percent was used as a fraction. */
const fix: Step = (request) => {
  const source = lastResult(request)
  const buggy = "Math.round(totalCents - totalCents * percent)"
  if (!source.includes(buggy)) return say("I could not find the discount line in what I read; stopping here.")
  return call("write_file", {
    path: "src/cart.js",
    content: source.replace(buggy, "Math.round(totalCents - (totalCents * percent) / 100)")
  })
}

/** Lines of a workspace file, as a person would paste them into the chat. */
const paste = (workspace: string, file: string, from: number, count: number): string =>
  readFileSync(path.join(workspace, file), "utf8")
    .split("\n")
    .slice(from, from + count)
    .join("\n")

/**
 * The scripted plan: 40 user turns over the sample project. Large reads and searches (truncated for
 * the window), mid-sized line ranges that pruning leaves alone, and a few pasted logs from the user.
 * @since 0.1.0
 */
export const planFor = (workspace: string): ReadonlyArray<PlanTurn> => [
  {
    user: "What is in this workspace?",
    steps: [
      call("list_dir", { path: ".", depth: 3 }),
      say(
        "A small shop backend: pricing in src/cart.js, a catalog, an order log and tests. Plan:\n1. Run the tests\n2. Find the failing code\n3. Fix it\n4. Run the tests green"
      )
    ]
  },
  { user: "Run the test suite.", steps: [sh("node --test"), say("Two tests fail, both about discounts.")] },
  {
    user: "Read the notes for agents.",
    steps: [read("NOTES.md"), say("Discounts arrive in percent (0-100); money is in cents.")]
  },
  {
    user: "How big is the catalog? Show it.",
    steps: [read("data/catalog.json"), say("420 products; the output was truncated for the window.")]
  },
  {
    user: "Which products are nearly out of stock?",
    steps: [search('"stock": [0-9],', "data"), say("A handful have single-digit stock.")]
  },
  {
    user: "Show the start of the order log.",
    steps: [read("logs/orders.log", 1, 40), say("One order per line: sku, qty, unit price, discount.")]
  },
  {
    user: `Here is what the checkout service printed last night:\n${paste(workspace, "logs/orders.log", 100, 160)}`,
    steps: [say("These are ordinary orders; the interesting ones carry a discount.")]
  },
  {
    user: "Find the warnings in the order log.",
    steps: [search("WARN", "logs"), say("Every warning says total-below-zero: discounted totals went negative.")]
  },
  {
    user: "Which orders had a 20% or 15% discount?",
    steps: [
      search("discount=20%", "logs"),
      search("discount=15%", "logs"),
      say("Each discounted order is among the warnings.")
    ]
  },
  {
    user: "Survey the source modules.",
    steps: [
      read("src/report.js"),
      read("src/inventory.js"),
      read("src/format.js"),
      read("src/catalog.js"),
      say("Helpers only; none touch prices.")
    ]
  },
  {
    user: "Pull orders 10000 to 10299 by number, sixty at a time.",
    steps: [
      search("order=100[0-5][0-9] ", "logs"),
      search(
        "order=1006[0-9] |order=1007[0-9] |order=1008[0-9] |order=1009[0-9] |order=1010[0-9] |order=1011[0-9] ",
        "logs"
      ),
      search("order=101[2-7][0-9] ", "logs"),
      search("order=101[89][0-9] |order=102[0-3][0-9] ", "logs"),
      search("order=102[4-9][0-9] ", "logs"),
      say("Three hundred orders; every discounted one is off.")
    ]
  },
  { user: "List every exported function.", steps: [search("^export function", "src"), say("About sixty exports.")] },
  {
    user: "Look at the tests again.",
    steps: [read("test/cart.test.js"), say("applyDiscount(20000, 10) must be 18000.")]
  },
  { user: "Show orders 400 to 440.", steps: [read("logs/orders.log", 400, 440), say("More of the same.")] },
  {
    user: `And this came from the payment gateway:\n${paste(workspace, "logs/orders.log", 700, 160)}`,
    steps: [say("Same pattern: the discounted orders are the odd ones.")]
  },
  { user: "Search the catalog for eco products.", steps: [search('"eco"', "data"), say("Around eighty eco items.")] },
  {
    user: "Show catalog entries 1 to 60.",
    steps: [read("data/catalog.json", 1, 60), say("Prices are integer cents.")]
  },
  {
    user: "Where is applyDiscount used?",
    steps: [search("applyDiscount"), say("In cart.js (checkout) and the tests.")]
  },
  { user: "Show orders 600 to 640.", steps: [read("logs/orders.log", 600, 640), say("Nothing new.")] },
  {
    user: "Read the whole order log and the whole catalog, then search for sale items.",
    steps: [
      read("logs/orders.log"),
      read("data/catalog.json"),
      search('"sale"', "data"),
      say("Nothing new about prices.")
    ]
  },
  { user: "Run the tests once more.", steps: [sh("node --test"), say("Still the two discount tests.")] },
  { user: "How many orders are there?", steps: [sh("wc -l logs/orders.log"), say("1,600 lines.")] },
  { user: "Show orders 800 to 840.", steps: [read("logs/orders.log", 800, 840), say("Same format throughout.")] },
  {
    user: `The night shift sent their log too:\n${paste(workspace, "logs/orders.log", 300, 200)}`,
    steps: [say("Noted: the discounted orders again.")]
  },
  {
    user: `And the morning shift's:\n${paste(workspace, "logs/orders.log", 500, 200)}`,
    steps: [say("The same pattern in the morning.")]
  },
  {
    user: "Page through orders 1 to 420, 70 lines at a time.",
    steps: [
      read("logs/orders.log", 1, 70),
      read("logs/orders.log", 71, 140),
      read("logs/orders.log", 141, 210),
      read("logs/orders.log", 211, 280),
      read("logs/orders.log", 281, 350),
      read("logs/orders.log", 351, 420),
      say("Paged through 420 orders: the discounted ones are where totals go wrong.")
    ]
  },
  {
    user: `One more paste, from the support inbox:\n${paste(workspace, "logs/orders.log", 1200, 160)}`,
    steps: [say("Customers saw these totals; all discounted.")]
  },
  {
    user: "Show catalog entries 300 to 360.",
    steps: [read("data/catalog.json", 300, 360), say("Nothing odd in the catalog.")]
  },
  { user: "Which orders used the mug SKUs?", steps: [search("sku=MUG-", "logs"), say("Mugs sell well.")] },
  {
    user: "Search the sources for percent.",
    steps: [search("percent", "src"), say("Only cart.js deals with percent.")]
  },
  {
    user: "What did the test run say, exactly?",
    steps: [sh("node --test"), say("applyDiscount(20000, 10) returned -180000: the percent is used as a fraction.")]
  },
  {
    user: "Now fix the discount bug.",
    steps: [
      read("src/cart.js"),
      fix,
      sh("node --test"),
      say("Fixed: applyDiscount divides the percent by 100. All 5 tests pass.")
    ]
  },
  { user: "Show me the changed lines.", steps: [read("src/cart.js", 15, 20), say("Line 18 now divides by 100.")] },
  {
    user: "Are the warnings in the log explained by the bug?",
    steps: [search("note=total-below-zero", "logs"), say("Yes: every warning is a discounted order.")]
  },
  { user: "Show orders 1400 to 1440.", steps: [read("logs/orders.log", 1400, 1440), say("The log predates the fix.")] },
  {
    user: "List the workspace again.",
    steps: [call("list_dir", { path: ".", depth: 3 }), say("Only src/cart.js changed.")]
  },
  {
    // What the notes said left the window long ago: the model reads it back from the archive (issue 39).
    user: "What did the notes say about discounts?",
    steps: [call("recall_archived", {}), say("Discounts are percent (0-100), money in cents.")]
  },
  { user: "Run the whole suite one final time.", steps: [sh("node --test"), say("5 passing, 0 failing.")] },
  {
    user: "Summarize the session.",
    steps: [say("Explored, found applyDiscount used the percent as a fraction, fixed it, tests green.")]
  },
  { user: "Thanks!", steps: [say("You're welcome.")] }
]

/** A script that plays the steps queued for the current turn, in order. */
const scripted = () => {
  let queue: Array<Step> = []
  let calls = 0
  const script: OfflineModel.Script = (request) => {
    const step = queue.shift() ?? say("(the plan has nothing more for this turn)")
    const reply = typeof step === "function" ? step(request) : step
    // Numbered ids: unique in the stream, and the same token count on every run, so every run of the
    // demo crosses the same thresholds.
    return reply.toolCalls === undefined
      ? reply
      : {
          ...reply,
          toolCalls: reply.toolCalls.map((toolCall) => ({
            ...toolCall,
            id: `demo_call_${String(++calls).padStart(4, "0")}`
          }))
        }
  }
  const load = (steps: ReadonlyArray<Step>) => {
    queue = [...steps]
  }
  return { script, load }
}

/** Settings of a demo run. @since 0.1.0 */
export interface Options {
  readonly storage: Stack.Storage
  /** The session id (default: a new one). */
  readonly stream?: string | undefined
  /** Where the sample project is copied (default: a new temp directory). */
  readonly runDir?: string | undefined
  readonly ui: Ui
  /** Stop after this many turns (tests). */
  readonly turns?: number
}

/** What a demo run left behind. @since 0.1.0 */
export interface Outcome {
  readonly stream: string
  readonly workspace: string
  readonly testsPass: boolean
  readonly budget: number
}

/** The turn-loop events that anchor a soft-tier batch: what was appended right before it. */
const anchorOf = (
  envelopes: ReadonlyArray<EventLog.Envelope>,
  index: number
): "turn start" | "mid-iteration" | undefined => {
  for (let at = index - 1; at >= 0; at--) {
    const event = envelopes[at]?.event
    if (event === undefined) return undefined
    if (event._tag !== "MessageAppended") continue
    if (event.message.role === "user") return "turn start"
    if (event.message.role === "tool") return "mid-iteration"
    return undefined
  }
  return undefined
}

/**
 * Counts of the events that show the window being managed. A soft-tier batch (outputs pruned or
 * deferred summaries applied) is "turn start" when the last message before it is the user's, and
 * "mid-iteration" when it is a tool result.
 * @since 0.1.0
 */
export const summarize = (envelopes: ReadonlyArray<EventLog.Envelope>) => {
  const count = (predicate: (envelope: EventLog.Envelope) => boolean) => envelopes.filter(predicate).length
  const tier = (name: string) => count((e) => e.event._tag === "Compacted" && e.event.tier === name)
  const renders = envelopes.flatMap((e) => (e.event._tag === "PromptRendered" ? [e.event.tokens.total] : []))
  const soft = envelopes.flatMap((e, index) =>
    e.event._tag === "ToolOutputPruned" || e.event._tag === "DeferredSummariesApplied"
      ? [anchorOf(envelopes, index)]
      : []
  )
  return {
    events: envelopes.length,
    renders: renders.length,
    largestRender: Math.max(0, ...renders),
    pruned: count((e) => e.event._tag === "ToolOutputPruned"),
    deferred: count((e) => e.event._tag === "ToolPairSummaryDeferred"),
    applied: count((e) => e.event._tag === "DeferredSummariesApplied"),
    softAtTurnStart: soft.filter((anchor) => anchor === "turn start").length,
    softMidIteration: soft.filter((anchor) => anchor === "mid-iteration").length,
    cooldown: tier("soft"),
    hard: tier("hard"),
    proactive: tier("proactive"),
    trimmed: count((e) => e.event._tag === "HistoryTrimmed"),
    media: count((e) => e.event._tag === "MediaPruned"),
    compactions: count((e) => compactionTypes.has(e.event._tag)),
    seams: count((e) => e.event._tag === "SeamProduced" || e.event._tag === "SeamsRecompacted"),
    // Recall only: the placed skills are injected too (their own line).
    recalled: count((e) => e.event._tag === "MessagesInjected" && e.event.kind !== "skill"),
    skills: count((e) => e.event._tag === "MessagesInjected" && e.event.kind === "skill")
  }
}

/** Run the demo. @since 0.1.0 */
export const run = (options: Options): Effect.Effect<Outcome, unknown> =>
  Effect.gen(function* () {
    const { ui } = options
    const runDir = options.runDir ?? mkdtempSync(path.join(tmpdir(), "ctxlog-demo-"))
    mkdirSync(runDir, { recursive: true })
    const workspace = path.join(runDir, "tiny-shop")
    cpSync(sampleDir, workspace, { recursive: true })
    const { script, load } = scripted()
    const provider = yield* Provider.make({
      provider: "offline",
      model: "offline-demo-plan",
      contextWindow,
      maxOutputTokens: outputReserve,
      script
    })
    const stream = options.stream ?? newSessionId("demo")
    // The budget needs the tools' schemas only; the session's tools read its file store (below).
    const budget = Agent.budgetFor({
      provider,
      tools: Tools.make({ workspace, readOutput: Agent.noReader, recallArchived: Agent.noArchive })
    })
    const where = Stack.describeStorage(options.storage)
    ui.line(ui.bold("ctxlog-agent demo"))
    ui.line(
      ui.dim(
        ui.fit(
          `sample project copied to ${workspace}\nsession ${stream} · window ${contextWindow} tokens = budget ${budget} + output reserve ${outputReserve} + tool schemas and reminder · log ${where}`
        )
      )
    )
    const plan = planFor(workspace)
    const turns = plan.slice(0, options.turns ?? plan.length)
    const envelopes = yield* Effect.gen(function* () {
      const files = yield* FileStore.FileStore
      const tools = Tools.make({
        workspace,
        readOutput: Tools.readOutputFrom(files, stream),
        recallArchived: Tools.recallArchivedFrom(yield* EventLog.EventLog, stream)
      })
      const config: Agent.Config = { stream, provider, tools, ui }
      const earlier = (yield* (yield* RecallIndex.RecallIndex).streamsOf(Agent.owner)).length
      if (earlier > 0) {
        ui.line(
          ui.warn(
            `this log already holds ${earlier} earlier session${earlier === 1 ? "" : "s"}: cross-session recall brings them into this run, so its numbers differ from a first run (leave out --db for a fresh log)`
          )
        )
      }
      yield* Agent.open(config, {
        knowledge: [Workspace.note(workspace), ...readNotes(workspace)],
        goal: "Find and fix the bug that makes the tiny-shop tests fail; finish with the tests green."
      })
      for (const [index, step] of turns.entries()) {
        ui.line()
        // A pasted log is shown folded; the log keeps it whole.
        ui.line(`${ui.accent(`[${index + 1}/${turns.length}] you›`)} ${fold(step.user)}`)
        load(step.steps)
        yield* Agent.turn(config, step.user)
      }
      const log = yield* EventLog.EventLog
      return Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
    }).pipe(Effect.provide(Stack.layer(options.storage, budget)))

    // The workspace's own test run decides, not the script's say-so.
    let testsPass = false
    try {
      execFileSync(process.execPath, ["--test"], {
        cwd: workspace,
        stdio: "pipe",
        env: { ...process.env, NO_COLOR: "1" }
      })
      testsPass = true
    } catch {
      testsPass = false
    }
    const s = summarize(envelopes)
    const chain = EventHash.verify(envelopes)
    ui.line()
    ui.line(ui.bold("What happened to the window"))
    ui.line(
      tableWrappingLast(
        [
          ["", "count", "what it is"],
          ["user turns", String(turns.length), "scripted user lines, each a full agent turn"],
          ["model calls", String(s.renders), "each one a PromptRendered event (hash of the exact request)"],
          ["events", String(s.events), "everything that changed the window, in one append-only stream"],
          ["recall injections", String(s.recalled), "messages recalled for the query, from this and earlier sessions"],
          ["skills placed", String(s.skills), "the agent's skills chosen for the turn's words, placed in knowledge"],
          [
            "deferred summaries",
            `${s.deferred} / ${s.applied}`,
            "tool-pair summaries recorded / batches applied under pressure"
          ],
          ["pruned outputs", String(s.pruned), "old tool outputs replaced by a one-line stub"],
          ["soft tier, turn start", String(s.softAtTurnStart), "prune + apply summaries when the window passes 70%"],
          [
            "soft tier, mid-iteration",
            String(s.softMidIteration),
            "the same between tool calls of one turn (no model call)"
          ],
          ["hard compactions", String(s.hard), "old history summarized when the soft tier was not enough (85%)"],
          ["proactive", String(s.proactive), "summarized ahead of need at the end of a turn (66%)"],
          ...(s.cooldown === 0
            ? []
            : [["cooldown compactions", String(s.cooldown), "template summaries while cooling down"]]),
          ["trims", String(s.trimmed), "mid-iteration last resort: oldest history dropped (still in the log)"],
          [
            "compactions in all",
            String(s.compactions),
            `events that shrank the window: ${s.pruned} pruned + ${s.applied} summary batches + ${s.cooldown + s.hard + s.proactive} summaries + ${s.trimmed} trims${s.media === 0 ? "" : ` + ${s.media} media pruned`} (what sessions and ctxlog streams count)`
          ],
          ["seams", String(s.seams), "older history folded into leveled <archived_context>"],
          [
            "largest render",
            `${s.largestRender} + ${outputReserve}`,
            `window tokens + output reserve, against a ${contextWindow}-token window`
          ],
          ["hash chain", chain.ok ? "verified" : "BROKEN", "every event chained to the one before it"],
          ["tests", testsPass ? "pass" : "FAIL", `node --test in ${workspace}`]
        ],
        ui.columns
      )
    )
    ui.line()
    ui.line(ui.bold("Look at the run with the inspector"))
    const storage = Invocation.storageArgs(options.storage)
    ui.line(
      `  ${Invocation.rootScript("ctxlog", ["window", stream, ...storage])}    # the final window, partition by partition`
    )
    ui.line(`  ${Invocation.rootScript("ctxlog", ["render", stream, ...storage])}    # the exact request of any render`)
    ui.line(`  ${Invocation.rootScript("ctxlog", ["serve", ...storage])}    # browse every event, replay any version`)
    ui.line()
    ui.line(ui.bold("Carry on talking to it"))
    ui.line(`  ${Invocation.resume(stream, options.storage)}`)
    return { stream, workspace, testsPass, budget }
  })
