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
import { ContextService, type Decide, type EventLog, Message, RecallSource, type Window } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  type Candidate,
  type Dropped,
  held,
  hitText,
  keepable,
  type SelectOptions,
  select
} from "./internal/assembly.js"
import * as skills from "./internal/skills.js"
import type { ScoredSkill } from "./SkillDisambiguation.js"

/**
 * How much of each kind to inject and what counts as relevant. Scores are the recall source's, higher
 * is better.
 * @since 0.1.0
 */
export interface RetrievalPolicy {
  /**
   * Token budget per kind. A kind with a budget is managed: looked up, and its stale messages replaced or
   * removed on every call; 0 turns it off (and removes what an earlier call injected). A kind without a
   * budget is neither looked up nor touched. Code context is returned, not injected (see
   * {@link ContextDelta.codeContext}); its stale messages are removed when they differ from the fresh
   * selection.
   */
  readonly budgets: {
    readonly recall: number
    readonly graphFacts: number
    readonly codeContext?: number | undefined
    readonly correction?: number | undefined
    readonly personaFacts?: number | undefined
    readonly trajectoryHints?: number | undefined
    readonly treeMemory?: number | undefined
    readonly reasoningStrategies?: number | undefined
    readonly crossSession?: number | undefined
    readonly sessionDigest?: number | undefined
    readonly documentRag?: number | undefined
  }
  /** Hits scoring below this are dropped (default: keep every score). */
  readonly minScore?: number | undefined
  /** Drop hits whose text the window already holds (default true). */
  readonly dedupe?: boolean | undefined
  /** Owner scope passed to the recall source. */
  readonly owner?: string | undefined
  /** Skills to choose for this query (returned in {@link ContextDelta.skills}, not injected). */
  readonly skills?: SkillPolicy | undefined
}

/** A skill scored against the query by the caller's matcher. @since 0.1.0 */
export interface SkillMatch extends ScoredSkill {
  readonly description: string
}

/**
 * How skills are chosen: best score first within `budget` tokens (name and description), at or above
 * `minScore`. Proactive exploration: a skill up to `explorationMargin` below the floor still surfaces
 * when the query names it (its name, case and `-`/`_` aside, as whole words).
 * @since 0.1.0
 */
export interface SkillPolicy {
  readonly matches: ReadonlyArray<SkillMatch>
  readonly budget: number
  /** Skills scoring below this are dropped unless exploration keeps them (default: the policy's `minScore`). */
  readonly minScore?: number
  /** How far below the floor a named skill may score and still surface (default 0.1; 0 turns exploration off). */
  readonly explorationMargin?: number
}

/** A skill `prepareContext` chose. @since 0.1.0 */
export interface ChosenSkill {
  readonly name: string
  readonly description: string
  readonly score: number
  /** Below the floor, kept because the query names it. */
  readonly explored: boolean
  readonly tokens: number
}

/** Retrieval kinds `prepareContext` can manage: policy budget name and injected kind. @since 0.1.0 */
export const managedKinds = [
  ["recall", "recall"],
  ["graphFacts", "graph_facts"],
  ["correction", "correction"],
  ["personaFacts", "persona_facts"],
  ["trajectoryHints", "trajectory_hints"],
  ["treeMemory", "tree_memory"],
  ["reasoningStrategies", "reasoning_strategies"],
  ["crossSession", "cross_session"],
  ["sessionDigest", "session_digest"],
  ["documentRag", "document_rag"]
] as const satisfies ReadonlyArray<readonly [keyof RetrievalPolicy["budgets"], Message.InjectedKind]>

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
  /** Every injected kind this call managed (recall, graph facts and each kind with a budget), in order. */
  readonly kinds: ReadonlyArray<KindDelta>
  /** Code context selected by the policy but not injected: apply it with {@link injectCodeContext}. */
  readonly codeContext: ReadonlyArray<string>
  /** Tokens of `codeContext`, if it is injected. */
  readonly codeContextTokens: number
  /** Ids of stale code context removed (it differed from `codeContext`; re-apply with {@link injectCodeContext}). */
  readonly codeContextRemoved: ReadonlyArray<string>
  /** Skills chosen for the query (empty without `policy.skills`). */
  readonly skills: ReadonlyArray<ChosenSkill>
  /** Tokens injected by this call (every managed kind that changed). */
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
    ...Object.entries(policy.budgets).map(([name, value]): readonly [string, number] => [
      `budgets.${name}`,
      value ?? 0
    ]),
    ["skills.budget", policy.skills?.budget ?? 0]
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
  const skills = policy.skills
  if (skills !== undefined) {
    if (skills.minScore !== undefined && Number.isNaN(skills.minScore)) {
      return Effect.fail(
        new InvalidRetrievalPolicy({ field: "skills.minScore", value: skills.minScore, detail: "NaN" })
      )
    }
    const margin = skills.explorationMargin ?? 0.1
    if (!(margin >= 0) || !Number.isFinite(margin)) {
      return Effect.fail(
        new InvalidRetrievalPolicy({
          field: "skills.explorationMargin",
          value: margin,
          detail: "expected a finite number >= 0"
        })
      )
    }
  }
  return Effect.void
}

const sameTexts = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a.length === b.length && a.every((text, index) => text === b[index])

/**
 * Refresh the injected context of `stream` for `query`: look up every managed kind (recall, graph facts,
 * each kind with a budget, code context) concurrently, apply `policy`, replace each managed kind's stale
 * messages with its fresh selection, and report what changed. A kind whose fresh selection is empty has
 * its stale messages removed; a kind whose selection equals what the window holds is left alone. Stale
 * code context that differs from the fresh selection is removed (the caller re-applies the selection).
 * Skills in `policy.skills` are chosen (with proactive exploration) and returned. A blank query looks
 * nothing up. A lookup failure writes nothing.
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

    // Every kind with a budget is managed; recall and graph facts always are.
    const managed = managedKinds.flatMap(([name, kind]) => {
      const budget = policy.budgets[name]
      return budget === undefined ? [] : [{ kind, budget }]
    })
    const codeBudget = policy.budgets.codeContext

    // What the window holds, before the lookups: with dedupe, a source is told which of the stream's
    // messages will be dropped, so it need not search a stream whose every message the window holds.
    const before = yield* context.load(stream)
    const refreshed = new Set<Message.MessageKind>([...managed.map(({ kind }) => kind), "code_context"])
    const window = held(before, refreshed)
    const dedupe = policy.dedupe ?? true

    const looksUp = (budget: number) => budget !== 0 && query.trim().length > 0
    const lookup = (kind: Message.InjectedKind, budget: number) =>
      looksUp(budget)
        ? source.recall({
            kind,
            stream,
            query,
            budget,
            owner: policy.owner,
            ...(dedupe ? { held: window.history } : {})
          })
        : Effect.succeed<ReadonlyArray<RecallSource.RecallHit>>([])

    // The lookups are independent reads: when more than one has work to do, run them at the same time
    // (a source that waits on a server or an embedder overlaps them). One alone runs in this fiber: a
    // fiber per lookup costs more than a local index's whole lookup (ADR 0076).
    const working =
      managed.filter(({ budget }) => looksUp(budget)).length +
      (looksUp(codeBudget ?? 0) ? 1 : 0) +
      ((policy.skills?.matches.length ?? 0) > 0 ? 1 : 0)
    const concurrency = working > 1 ? "unbounded" : 1
    const found = yield* Effect.all(
      {
        kinds: Effect.all(
          managed.map(({ kind, budget }) => lookup(kind, budget)),
          { concurrency }
        ),
        codeContext: lookup("code_context", codeBudget ?? 0),
        skills: skills.skillCandidates(context, policy.skills)
      },
      { concurrency }
    )

    const keepable = {
      minScore: policy.minScore ?? Number.NEGATIVE_INFINITY,
      dedupe,
      stream,
      held: window
    }
    const counted = (kind: Message.InjectedKind, hits: ReadonlyArray<RecallSource.RecallHit>) =>
      candidates(context, kind, hits, keepable)
    const kindCandidates = yield* Effect.forEach(managed, ({ kind }, index) => counted(kind, found.kinds[index] ?? []))
    const codeCandidates = yield* counted("code_context", found.codeContext)
    const seen = new Set<string>()
    const choose = (kindCandidates: ReadonlyArray<Candidate>, budget: number) =>
      select(kindCandidates, { ...keepable, budget, seen })
    const chosen = managed.map(({ kind, budget }, index) => ({
      kind,
      chosen: choose(kindCandidates[index] ?? [], budget)
    }))
    const codeContext = choose(codeCandidates, codeBudget ?? 0)

    const apply = (kind: Message.InjectedKind, selection: ReturnType<typeof select>) =>
      Effect.gen(function* () {
        const current = yield* context.load(stream)
        // An injection replaces its kind in knowledge only (what compaction or a seam left in history
        // stays), so only knowledge is compared and reported: a history message of the kind neither makes
        // an unchanged selection look changed nor shows up as removed (issue 20, behaviour 8).
        const stale = current.knowledge.filter((message) => message.kind === kind)
        const texts = selection.kept.map((candidate) => candidate.text)
        if (sameTexts(texts, stale.map(Message.textOf))) {
          return deltaOf(kind, stale, [], true, selection.dropped)
        }
        const outcome = yield* context.inject(stream, kind, texts)
        const injected = outcome.window.knowledge.filter((message) => message.kind === kind)
        return deltaOf(
          kind,
          injected,
          stale.map((message) => message.id),
          false,
          selection.dropped
        )
      })

    // Sequential on purpose: all write the same stream, and concurrent writes would only conflict and retry.
    const kinds: Array<KindDelta> = []
    for (const { kind, chosen: selection } of chosen) kinds.push(yield* apply(kind, selection))

    // Code context is the caller's to apply; what the window holds from an earlier turn goes when it is
    // not what this query selects.
    let codeContextRemoved: ReadonlyArray<string> = []
    if (codeBudget !== undefined) {
      const current = yield* context.load(stream)
      const stale = [...current.knowledge, ...current.history].filter((message) => message.kind === "code_context")
      const texts = codeContext.kept.map((candidate) => candidate.text)
      if (stale.length > 0 && !sameTexts(texts, stale.map(Message.textOf))) {
        yield* context.removeKind(stream, "code_context")
        codeContextRemoved = stale.map((message) => message.id)
      }
    }

    const emptyDelta = (kind: Message.InjectedKind) => deltaOf(kind, [], [], true, noneDropped)
    const after = yield* context.load(stream)
    const delta: ContextDelta = {
      stream,
      query,
      recall: kinds.find((item) => item.kind === "recall") ?? emptyDelta("recall"),
      graphFacts: kinds.find((item) => item.kind === "graph_facts") ?? emptyDelta("graph_facts"),
      kinds,
      codeContext: codeContext.kept.map((candidate) => candidate.text),
      codeContextTokens: codeContext.kept.reduce((total, candidate) => total + candidate.tokens, 0),
      codeContextRemoved,
      skills: skills.chooseSkills(query, policy, found.skills),
      tokens: kinds.reduce((total, item) => total + (item.unchanged ? 0 : item.tokens), 0),
      window: after
    }
    return delta
  })

const noneDropped: Dropped = { belowFloor: 0, duplicate: 0, overBudget: 0 }

/** Whether the query names the skill: its name's words appear in the query, in order, as whole words. */
export const namesSkill = (query: string, name: string): boolean => skills.namesSkill(query, name)

/** The text a chosen skill is counted and placed as (one `skill` message per skill): `name: description`. @since 0.8.0 */
export const skillText = (skill: { readonly name: string; readonly description: string }): string =>
  skills.skillText(skill)

/**
 * Choose skills for `query` as `prepareContext` does (best score first within the budget, at or above
 * the floor, with proactive exploration), without looking anything else up or writing anything: what
 * a caller uses when it places skills but manages no other kind (`Turn.prepare` without recall).
 * @since 0.8.0
 */
export const selectSkills = (
  query: string,
  policy: SkillPolicy
): Effect.Effect<ReadonlyArray<ChosenSkill>, InvalidRetrievalPolicy, ContextService.ContextService> =>
  Effect.gen(function* () {
    const retrieval: RetrievalPolicy = { budgets: { recall: 0, graphFacts: 0 }, skills: policy }
    yield* checkPolicy(retrieval)
    const context = yield* ContextService.ContextService
    return skills.chooseSkills(query, retrieval, yield* skills.skillCandidates(context, policy))
  })

/**
 * Place chosen skills in the window as the `skill` kind (one knowledge message per skill,
 * {@link skillText}), replacing what an earlier turn placed: an empty choice removes them. When the
 * window already holds exactly these skills nothing is written (the prompt prefix stays byte-stable).
 * One `MessagesInjected` event, so a render rebuilds from the log and a replay sets the same skills.
 * @since 0.8.0
 */
export const placeSkills = (
  stream: EventLog.StreamId,
  chosen: ReadonlyArray<Pick<ChosenSkill, "name" | "description">>
): Effect.Effect<KindDelta, ContextService.LogError | Decide.InvalidCommand, ContextService.ContextService> =>
  Effect.gen(function* () {
    const context = yield* ContextService.ContextService
    const current = yield* context.load(stream)
    const stale = current.knowledge.filter((message) => message.kind === "skill")
    const texts = chosen.map(skillText)
    if (sameTexts(texts, stale.map(Message.textOf))) return deltaOf("skill", stale, [], true, noneDropped)
    const outcome = yield* context.inject(stream, "skill", texts)
    return deltaOf(
      "skill",
      outcome.window.knowledge.filter((message) => message.kind === "skill"),
      stale.map((message) => message.id),
      false,
      noneDropped
    )
  })

/**
 * Count each hit's tokens as it would enter the log: only the hits `select` could keep. A hit under the
 * score floor or (with dedupe) one the window already holds is dropped before its tokens are read, so it
 * is not counted (its `tokens` is 0); a prepare whose hits the window holds counts nothing.
 */
const candidates = (
  context: ContextService.ContextService.Service,
  kind: Message.InjectedKind,
  hits: ReadonlyArray<RecallSource.RecallHit>,
  policy: Omit<SelectOptions, "budget" | "seen">
): Effect.Effect<ReadonlyArray<Candidate>> => {
  // A hit with no text has nothing to inject.
  const useful = hits.flatMap((hit) => {
    const text = hitText(hit)
    return text.length === 0 ? [] : [{ text, score: hit.score, source: hit.source }]
  })
  const toCount = useful.filter((candidate) => keepable(candidate, policy))
  if (toCount.length === 0) return Effect.succeed(useful.map((candidate) => ({ ...candidate, tokens: 0 })))
  return Effect.map(
    context.prepare(
      toCount.map((candidate) => Message.system(candidate.text)),
      kind
    ),
    (prepared) => {
      const tokens = new Map(toCount.map((candidate, index) => [candidate, prepared[index]?.tokens ?? 0]))
      return useful.map((candidate) => ({ ...candidate, tokens: tokens.get(candidate) ?? 0 }))
    }
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

// ---- skills (in their own module, re-exported here) ----------------------------------------------------

export {
  type DisambiguateOptions,
  disambiguateSkills,
  InvalidSkillInput,
  type ScoredSkill,
  type Skill
} from "./SkillDisambiguation.js"
