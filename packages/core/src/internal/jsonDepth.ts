/**
 * The nesting depth of a parsed JSON value, found without recursion. Schema decoding walks a value
 * recursively, so a value nested thousands of levels deep (a hostile JSONL line) would overflow the
 * stack and end in a defect; decoders check the depth first and fail with a typed error instead.
 */

/** The deepest nesting a stored event may have: the same bound the append boundary enforces (`Validation.maxDepth`). */
export const maxEventDepth = 128

/** The path of the first container nested deeper than `limit` levels (the root is level 1), or undefined. */
export const tooDeep = (value: unknown, limit: number): string | undefined => {
  const stack: Array<{ readonly value: unknown; readonly path: string; readonly depth: number }> = [
    { value, path: "", depth: 1 }
  ]
  for (;;) {
    const frame = stack.pop()
    if (frame === undefined) return undefined
    if (typeof frame.value !== "object" || frame.value === null) continue
    if (frame.depth > limit) return frame.path
    for (const [key, child] of Object.entries(frame.value)) {
      if (typeof child === "object" && child !== null) {
        stack.push({ value: child, path: frame.path === "" ? key : `${frame.path}.${key}`, depth: frame.depth + 1 })
      }
    }
  }
}
