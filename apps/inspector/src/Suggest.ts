/**
 * "Did you mean …?": the known names nearest to a mistyped one (edit distance, case-insensitive), and
 * long lists summarized so an error stays one readable line.
 *
 * @since 0.2.0
 */

const distance = (a: string, b: string): number => {
  const left = a.toLowerCase()
  const right = b.toLowerCase()
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index)
  for (let i = 1; i <= left.length; i++) {
    const current = [i]
    for (let j = 1; j <= right.length; j++) {
      const cost = left[i - 1] === right[j - 1] ? 0 : 1
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost))
    }
    previous = current
  }
  return previous[right.length] ?? 0
}

/** Up to `limit` names close to `wanted` (a prefix or substring match counts as close), nearest first. @since 0.2.0 */
export const nearest = (wanted: string, names: ReadonlyArray<string>, limit = 3): ReadonlyArray<string> =>
  names
    .map((name) => {
      const lower = name.toLowerCase()
      const w = wanted.toLowerCase()
      const score = lower.includes(w) || w.includes(lower) ? 0 : distance(wanted, name)
      return { name, score }
    })
    .filter((candidate) => candidate.score <= Math.max(2, Math.floor(wanted.length / 3)))
    .sort((a, b) => a.score - b.score || a.name.localeCompare(b.name))
    .slice(0, limit)
    .map((candidate) => candidate.name)

/** `; did you mean "a" or "b"?`, or nothing when no name is close. @since 0.2.0 */
export const didYouMean = (wanted: string, names: ReadonlyArray<string>): string => {
  const close = nearest(wanted, names)
  if (close.length === 0) return ""
  const quoted = close.map((name) => JSON.stringify(name))
  return `; did you mean ${quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`}?`
}

/** The first `shown` items and how many more: `a, b, c and 469 more`. @since 0.2.0 */
export const summarize = (items: ReadonlyArray<string>, shown = 3): string =>
  items.length <= shown + 1 ? items.join(", ") : `${items.slice(0, shown).join(", ")} and ${items.length - shown} more`
