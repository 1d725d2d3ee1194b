/**
 * The skills the sample agent offers (ADR 0126: the `skill` window kind the turn places): a few named
 * procedures, each scored against the turn's user message by the words of its name and description the
 * message uses. The turn chooses within the policy's share and places the chosen ones in knowledge,
 * replacing the last turn's.
 * @since 0.8.0
 */
import type { ContextAssembly } from "@ctxlog/memory"

/** A skill the agent offers: its name, and the procedure the model follows when it is placed. @since 0.8.0 */
export interface Skill {
  readonly name: string
  readonly description: string
}

/** The agent's skills. @since 0.8.0 */
export const skills: ReadonlyArray<Skill> = [
  {
    name: "run-tests",
    description:
      "Run the project's tests (node --test) and read the failures: the failing test's name, the assertion and the file it points to, before changing any code."
  },
  {
    name: "fix-bug",
    description:
      "Fix a bug: reproduce it with a failing test, read the code the test reaches, change the smallest thing, run the tests again."
  }
]

const words = (text: string): ReadonlySet<string> =>
  new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((word) => word.length > 2)
  )

/**
 * Each skill scored for `query`: the share of its name's words the query uses (a named skill scores 1),
 * else a quarter of the share of its description's words. Deterministic, no model.
 * @since 0.8.0
 */
export const matchesFor = (query: string): ReadonlyArray<ContextAssembly.SkillMatch> => {
  const asked = words(query)
  return skills.map((skill) => {
    const name = [...words(skill.name.replaceAll("-", " "))]
    const described = [...words(skill.description)]
    const named = name.length === 0 ? 0 : name.filter((word) => asked.has(word)).length / name.length
    const score = named === 1 ? 1 : described.filter((word) => asked.has(word)).length / described.length / 0.25
    return { name: skill.name, description: skill.description, score: Math.min(1, Math.round(score * 100) / 100) }
  })
}
