/**
 * Choosing skills for a query: counting each one as it would enter the log, the floor, the budget and
 * proactive exploration. `ContextAssembly` (`prepareContext`, `selectSkills`, `placeSkills`) is the
 * public home; this module holds the shared steps so both go through one choice.
 */
import { type ContextService, Message } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import type { ChosenSkill, RetrievalPolicy, SkillMatch, SkillPolicy } from "../ContextAssembly.js"

/** Words of a text, lower case, with `-`, `_` and punctuation as spaces. */
const words = (text: string): string =>
  ` ${text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()} `

/** Whether the query names the skill: its name's words appear in the query, in order, as whole words. */
export const namesSkill = (query: string, name: string): boolean => {
  const wanted = words(name)
  return wanted.trim().length > 0 && words(query).includes(wanted)
}

/** The text a skill is counted and placed as. */
export const skillText = (skill: { readonly name: string; readonly description: string }): string =>
  `${skill.name}: ${skill.description}`

/** Count each skill's tokens (name and description), as its `skill` message would enter the log. */
export const skillCandidates = (
  context: ContextService.ContextService.Service,
  skills: SkillPolicy | undefined
): Effect.Effect<ReadonlyArray<SkillMatch & { readonly tokens: number }>> =>
  skills === undefined || skills.matches.length === 0
    ? Effect.succeed([])
    : Effect.map(
        context.prepare(
          skills.matches.map((skill) => Message.system(skillText(skill))),
          "skill"
        ),
        (prepared) => skills.matches.map((skill, index) => ({ ...skill, tokens: prepared[index]?.tokens ?? 0 }))
      )

/**
 * Skills at or above the floor, best score first, within the budget; a skill up to the exploration
 * margin below the floor joins them when the query names it (proactive exploration).
 */
export const chooseSkills = (
  query: string,
  policy: RetrievalPolicy,
  matches: ReadonlyArray<SkillMatch & { readonly tokens: number }>
): ReadonlyArray<ChosenSkill> => {
  const skills = policy.skills
  if (skills === undefined) return []
  const floor = skills.minScore ?? policy.minScore ?? Number.NEGATIVE_INFINITY
  const margin = skills.explorationMargin ?? 0.1
  const chosen: Array<ChosenSkill> = []
  let used = 0
  const ordered = matches
    .map((match, index) => ({ match, index }))
    .sort((a, b) => b.match.score - a.match.score || a.index - b.index)
  for (const { match } of ordered) {
    const explored = !(match.score >= floor)
    if (explored && !(match.score >= floor - margin && margin > 0 && namesSkill(query, match.name))) continue
    if (used + match.tokens > skills.budget) continue
    used += match.tokens
    chosen.push({
      name: match.name,
      description: match.description,
      score: match.score,
      explored,
      tokens: match.tokens
    })
  }
  return chosen
}
