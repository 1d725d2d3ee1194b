/**
 * Checks of a parsed JSON value made without recursion, before a schema walks it. Schema decoding walks a
 * value recursively, so a value nested thousands of levels deep (a hostile JSONL line) would overflow the
 * stack and end in a defect; and it drops an object key `"__proto__"` without a word (a JavaScript object
 * cannot hold it as ordinary data), so such a value could not round-trip. Decoders check first and fail
 * with a typed error instead.
 */

/** The deepest nesting a stored event may have: the same bound the append boundary enforces (`Validation.maxDepth`). */
export const maxEventDepth = 128

/** The object key no stored value may have: decoding would drop it (and assigning it sets a prototype). */
export const reservedKey = "__proto__"

/** Why `key` may not appear in a stored value, or undefined. */
export const keyProblem = (key: string): string | undefined =>
  key === reservedKey ? `key "${reservedKey}" is not allowed: it cannot be kept as ordinary data` : undefined

/**
 * The first container nested deeper than `limit` levels (the root is level 1), or the first object key
 * {@link keyProblem} refuses: its path and why; undefined when there is none.
 */
export const structureProblem = (
  value: unknown,
  limit: number
): { readonly path: string; readonly detail: string } | undefined => {
  const stack: Array<{ readonly value: unknown; readonly path: string; readonly depth: number }> = [
    { value, path: "", depth: 1 }
  ]
  for (;;) {
    const frame = stack.pop()
    if (frame === undefined) return undefined
    if (typeof frame.value !== "object" || frame.value === null) continue
    if (frame.depth > limit) return { path: frame.path, detail: `nested deeper than ${limit} levels` }
    const isArray = Array.isArray(frame.value)
    for (const [key, child] of Object.entries(frame.value)) {
      const path = frame.path === "" ? key : `${frame.path}.${key}`
      const problem = isArray ? undefined : keyProblem(key)
      if (problem !== undefined) return { path, detail: problem }
      if (typeof child === "object" && child !== null) stack.push({ value: child, path, depth: frame.depth + 1 })
    }
  }
}
