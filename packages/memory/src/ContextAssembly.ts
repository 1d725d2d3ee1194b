/**
 * Per-turn context assembly. `prepareContext` refreshes the injected context of a conversation for the
 * user's latest query: it looks up semantic recall, graph facts and (on request) code context
 * concurrently, applies a retrieval policy (a token budget per kind, a score floor, dedupe against what
 * the window already holds), replaces the stale recall and graph-fact messages with the fresh ones, and
 * returns a {@link ContextDelta}. Code context is returned, not injected: the caller applies it with
 * {@link injectCodeContext} when it wants it.
 *
 * `disambiguateSkills` asks the language model to order skill matches whose scores are too close to
 * call, and gives up quietly (`Option.none()`) whenever the model cannot help.
 *
 * @since 0.1.0
 */
import {
  ContextService,
  type Decide,
  type EventLog,
  LanguageModel,
  Message,
  RecallSource,
  type Window
} from "@ctxlog/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type Candidate, type Dropped, held, hitText, parseOrder, select, skillPrompt } from "./internal/assembly.js"

/**
 * How much of each kind to inject and what counts as relevant. Scores are the recall source's, higher
 * is better.
 * @since 0.1.0
 */
export interface RetrievalPolicy {
  /** Token budget per kind; 0 turns a kind off (and removes what an earlier call injected). `codeContext` defaults to 0 (not looked up). */
  readonly budgets: {
    readonly recall: number
    readonly graphFacts: number
    readonly codeContext?: number
  }
  /** Hits scoring below this are dropped (default: keep every score). */
  readonly minScore?: number
  /** Drop hits whose text the window already holds (default true). */
  readonly dedupe?: boolean
  /** Owner scope passed to the recall source. */
  readonly owner?: string
}

/** A policy field is out of range; nothing was looked up or written. @since 0.1.0 */
export class InvalidRetrievalPolicy extends Schema.TaggedError<InvalidRetrievalPolicy>()("InvalidRetrievalPolicy", {
  field: Schema.String,
  value: Schema.Number,
  detail: Schema.String
}) {
  override get message(): string {
    return `retrieval policy: ${this.field} = ${this.value} is invalid: ${this.detail}`
  }
}

/** What `prepareContext` did to one injected kind. @since 0.1.0 */
export interface KindDelta {
  readonly kind: Message.InjectedKind
  /** The messages now injected for this kind (as the window holds them). */
  readonly injected: ReadonlyArray<Message.Message>
  /** Ids of the stale messages of this kind that were replaced. */
  readonly removed: ReadonlyArray<string>
  /** Tokens of `injected`. */
  readonly tokens: number
  /** The fresh selection equals what the window held, so nothing was written (the prompt prefix stays byte-stable). */
  readonly unchanged: boolean
  /** Hits left out by the policy, by reason. */
  readonly dropped: Dropped
}

/** What a `prepareContext` call changed. @since 0.1.0 */
export interface ContextDelta {
  readonly stream: string
  readonly query: string
  readonly recall: KindDelta
  readonly graphFacts: KindDelta
  /** Code context selected by the policy but not injected: apply it with {@link injectCodeContext}. */
  readonly codeContext: ReadonlyArray<string>
  /** Tokens of `codeContext`, if it is injected. */
  readonly codeContextTokens: number
  /** Tokens injected by this call (recall plus graph facts). */
  readonly tokens: number
  /** The window after the call. */
  readonly window: Window.Window
}

/** Every failure of `prepareContext`. @since 0.1.0 */
export type PrepareContextError =
  | InvalidRetrievalPolicy
  | RecallSource.RecallError
  | ContextService.LogError
  | Decide.InvalidCommand

/** A sensible default: 1,500 tokens of recall, 500 of graph facts, no code context. @since 0.1.0 */
export const defaultPolicy: RetrievalPolicy = { budgets: { recall: 1500, graphFacts: 500 }, dedupe: true }

const checkPolicy = (policy: RetrievalPolicy): Effect.Effect<void, InvalidRetrievalPolicy> => {
  const budgets: ReadonlyArray<readonly [string, number]> = [
    ["budgets.recall", policy.budgets.recall],
    ["budgets.graphFacts", policy.budgets.graphFacts],
    ["budgets.codeContext", policy.budgets.codeContext ?? 0]
  ]
  for (const [field, value] of budgets) {
    if (!Number.isInteger(value) || value < 0) {
      return Effect.fail(
        new InvalidRetrievalPolicy({ field, value, detail: "expected a non-negative integer token count" })
      )
    }
  }
  if (policy.minScore !== undefined && Number.isNaN(policy.minScore)) {
    return Effect.fail(new InvalidRetrievalPolicy({ field: "minScore", value: policy.minScore, detail: "NaN" }))
  }
  return Effect.void
}

const sameTexts = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a.length === b.length && a.every((text, index) => text === b[index])

/**
 * Refresh the injected context of `stream` for `query`: look up recall, graph facts and code context
 * concurrently, apply `policy`, replace stale recall and graph-fact messages with the fresh selection,
 * and report what changed. A kind whose fresh selection is empty has its stale messages removed; a kind
 * whose selection equals what the window holds is left alone. A blank query looks nothing up. A lookup
 * failure writes nothing.
 * @since 0.1.0
 */
export const prepareContext = (
  stream: EventLog.StreamId,
  query: string,
  policy: RetrievalPolicy = defaultPolicy
): Effect.Effect<ContextDelta, PrepareContextError, ContextService.ContextService | RecallSource.RecallSource> =>
  Effect.gen(function* () {
    yield* checkPolicy(policy)
    const context = yield* ContextService.ContextService
    const source = yield* RecallSource.RecallSource

    const lookup = (kind: Message.InjectedKind, budget: number) =>
      budget === 0 || query.trim().length === 0
        ? Effect.succeed<ReadonlyArray<Candidate>>([])
        : source
            .recall({ kind, stream, query, budget, ...(policy.owner === undefined ? {} : { owner: policy.owner }) })
            .pipe(Effect.flatMap((hits) => candidates(context, kind, hits)))

    // The lookups are independent reads: run them at the same time.
    const found = yield* Effect.all(
      {
        recall: lookup("recall", policy.budgets.recall),
        graphFacts: lookup("graph_facts", policy.budgets.graphFacts),
        codeContext: lookup("code_context", policy.budgets.codeContext ?? 0)
      },
      { concurrency: "unbounded" }
    )

    const before = yield* context.load(stream)
    const window = held(before, new Set<Message.MessageKind>(["recall", "graph_facts", "code_context"]))
    const seen = new Set<string>()
    const choose = (kindCandidates: ReadonlyArray<Candidate>, budget: number) =>
      select(kindCandidates, {
        budget,
        minScore: policy.minScore ?? Number.NEGATIVE_INFINITY,
        dedupe: policy.dedupe ?? true,
        stream,
        held: window,
        seen
      })
    const recall = choose(found.recall, policy.budgets.recall)
    const graphFacts = choose(found.graphFacts, policy.budgets.graphFacts)
    const codeContext = choose(found.codeContext, policy.budgets.codeContext ?? 0)

    const apply = (kind: Message.InjectedKind, chosen: ReturnType<typeof select>) =>
      Effect.gen(function* () {
        const current = yield* context.load(stream)
        const stale = [...current.knowledge, ...current.history].filter((message) => message.kind === kind)
        const texts = chosen.kept.map((candidate) => candidate.text)
        if (sameTexts(texts, stale.map(Message.textOf))) {
          return {
            delta: deltaOf(kind, stale, [], true, chosen.dropped),
            window: current
          }
        }
        const outcome = yield* context.inject(stream, kind, texts)
        const injected = [...outcome.window.knowledge, ...outcome.window.history].filter(
          (message) => message.kind === kind
        )
        return {
          delta: deltaOf(
            kind,
            injected,
            stale.map((message) => message.id),
            false,
            chosen.dropped
          ),
          window: outcome.window
        }
      })

    // Sequential on purpose: both write the same stream, and concurrent writes would only conflict and retry.
    const recallApplied = yield* apply("recall", recall)
    const graphApplied = yield* apply("graph_facts", graphFacts)
    const delta: ContextDelta = {
      stream,
      query,
      recall: recallApplied.delta,
      graphFacts: graphApplied.delta,
      codeContext: codeContext.kept.map((candidate) => candidate.text),
      codeContextTokens: codeContext.kept.reduce((total, candidate) => total + candidate.tokens, 0),
      tokens:
        (recallApplied.delta.unchanged ? 0 : recallApplied.delta.tokens) +
        (graphApplied.delta.unchanged ? 0 : graphApplied.delta.tokens),
      window: graphApplied.window
    }
    return delta
  })

/** Count each hit's tokens as it would enter the log. */
const candidates = (
  context: ContextService.ContextService.Service,
  kind: Message.InjectedKind,
  hits: ReadonlyArray<RecallSource.RecallHit>
): Effect.Effect<ReadonlyArray<Candidate>> => {
  // A hit with no text has nothing to inject.
  const useful = hits.filter((hit) => hitText(hit).length > 0)
  const texts = useful.map(hitText)
  return Effect.map(
    context.prepare(
      texts.map((text) => Message.system(text)),
      kind
    ),
    (prepared) =>
      useful.map((hit, index) => ({
        text: texts[index] ?? "",
        score: hit.score,
        tokens: prepared[index]?.tokens ?? 0,
        ...(hit.source === undefined ? {} : { source: hit.source })
      }))
  )
}

const deltaOf = (
  kind: Message.InjectedKind,
  injected: ReadonlyArray<Message.Message>,
  removed: ReadonlyArray<string>,
  unchanged: boolean,
  dropped: Dropped
): KindDelta => ({
  kind,
  injected,
  removed,
  tokens: injected.reduce((total, message) => total + message.tokens, 0),
  unchanged,
  dropped
})

/**
 * Inject code context (for example `delta.codeContext`), replacing any code context the window holds.
 * @since 0.1.0
 */
export const injectCodeContext = (
  stream: EventLog.StreamId,
  items: ReadonlyArray<string | Message.MessageInput>
): Effect.Effect<
  ContextService.Outcome,
  ContextService.LogError | Decide.InvalidCommand,
  ContextService.ContextService
> => Effect.flatMap(ContextService.ContextService, (context) => context.inject(stream, "code_context", items))

// ---- skills -------------------------------------------------------------------------------------------

/** A skill the agent can use. @since 0.1.0 */
export interface Skill {
  readonly name: string
  readonly description: string
}

/** A skill's match score for a query (higher is better). @since 0.1.0 */
export interface ScoredSkill {
  readonly name: string
  readonly score: number
}

/** Options of {@link disambiguateSkills}. @since 0.1.0 */
export interface DisambiguateOptions {
  /** Matches within this much of the best score are ambiguous (default 0.1). */
  readonly margin?: number
  /** At most this many ambiguous matches go to the model (default 5). */
  readonly maxCandidates?: number
  /** Give up after this long (default 15 seconds). */
  readonly timeout?: Duration.DurationInput
}

/** The skills or scores given to `disambiguateSkills` are inconsistent. @since 0.1.0 */
export class InvalidSkillInput extends Schema.TaggedError<InvalidSkillInput>()("InvalidSkillInput", {
  detail: Schema.String
}) {
  override get message(): string {
    return `disambiguateSkills: ${this.detail}`
  }
}

const checkSkills = (
  query: string,
  skills: ReadonlyArray<Skill>,
  scored: ReadonlyArray<ScoredSkill>,
  margin: number,
  maxCandidates: number
): InvalidSkillInput | undefined => {
  const invalid = (detail: string) => new InvalidSkillInput({ detail })
  if (query.trim().length === 0) return invalid("the query is empty")
  if (!(margin >= 0) || !Number.isFinite(margin)) return invalid(`margin ${margin} must be a finite number >= 0`)
  if (!Number.isInteger(maxCandidates) || maxCandidates < 2) {
    return invalid(`maxCandidates ${maxCandidates} must be an integer >= 2`)
  }
  const known = new Set<string>()
  for (const skill of skills) {
    if (skill.name.trim().length === 0) return invalid("a skill has an empty name")
    if (known.has(skill.name)) return invalid(`skill "${skill.name}" is listed twice`)
    known.add(skill.name)
  }
  const seen = new Set<string>()
  for (const match of scored) {
    if (!known.has(match.name)) return invalid(`scored skill "${match.name}" is not among the skills`)
    if (seen.has(match.name)) return invalid(`skill "${match.name}" is scored twice`)
    if (!Number.isFinite(match.score)) return invalid(`skill "${match.name}" has score ${match.score}`)
    seen.add(match.name)
  }
  return undefined
}

/**
 * Order ambiguous skill matches with the language model. The matches within `margin` of the best score
 * (at most `maxCandidates`) go to the model with their descriptions; its answer reorders them, and the
 * other matches follow in score order. Returns `Option.none()` — keep score order — when fewer than two
 * matches are ambiguous, or when the model fails, times out, or answers anything but a JSON array of
 * candidate names. Inconsistent input is an {@link InvalidSkillInput}.
 * @since 0.1.0
 */
export const disambiguateSkills = (
  query: string,
  skills: ReadonlyArray<Skill>,
  scored: ReadonlyArray<ScoredSkill>,
  options: DisambiguateOptions = {}
): Effect.Effect<Option.Option<ReadonlyArray<ScoredSkill>>, InvalidSkillInput, LanguageModel.LanguageModel> =>
  Effect.gen(function* () {
    const margin = options.margin ?? 0.1
    const maxCandidates = options.maxCandidates ?? 5
    const problem = checkSkills(query, skills, scored, margin, maxCandidates)
    if (problem !== undefined) return yield* problem
    const ranked = scored
      .map((match, index) => ({ match, index }))
      .sort((a, b) => b.match.score - a.match.score || a.index - b.index)
      .map(({ match }) => match)
    const best = ranked[0]
    if (best === undefined) return Option.none()
    const ambiguous = ranked.filter((match) => best.score - match.score <= margin).slice(0, maxCandidates)
    if (ambiguous.length < 2) return Option.none()

    const described = new Map(skills.map((skill) => [skill.name, skill.description]))
    const prompt = skillPrompt(
      query,
      ambiguous.map((match) => ({ name: match.name, description: described.get(match.name) ?? "" }))
    )
    const model = yield* LanguageModel.LanguageModel
    const answer = yield* model
      .generate({
        system: prompt.system,
        messages: [{ role: "user", parts: [{ type: "text", text: prompt.user }] }],
        maxOutputTokens: 200,
        temperature: 0
      })
      .pipe(
        Effect.timeoutOption(options.timeout ?? Duration.seconds(15)),
        // Any model failure means "no advice": the caller keeps score order.
        Effect.option,
        Effect.map(Option.flatten)
      )
    return Option.flatMap(answer, (response) => {
      const text = response.parts.map((part) => (part.type === "text" ? part.text : "")).join("")
      const order = parseOrder(
        text,
        ambiguous.map((match) => match.name)
      )
      if (order === undefined) return Option.none()
      const byName = new Map(ranked.map((match) => [match.name, match]))
      const front = order.flatMap((name) => {
        const match = byName.get(name)
        return match === undefined ? [] : [match]
      })
      const chosen = new Set(order)
      return Option.some([...front, ...ranked.filter((match) => !chosen.has(match.name))])
    })
  })
