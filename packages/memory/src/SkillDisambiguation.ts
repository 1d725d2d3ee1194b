/**
 * Skill disambiguation: `disambiguateSkills` asks the language model to order skill matches whose scores
 * are too close to call, and gives up quietly (`Option.none()`) whenever the model cannot help.
 * Re-exported by `ContextAssembly`, its public home.
 *
 * @since 0.1.0
 */
import { LanguageModel } from "@ctxlog/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { parseOrder, skillPrompt } from "./internal/assembly.js"
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
