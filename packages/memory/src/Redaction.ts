/**
 * Redaction of secrets before an event is written: a secret that never enters the log cannot leak from
 * it. Every string in an event (message text, tool inputs and outputs, summaries, facts) is passed
 * through the rules before the event is encoded and hashed, so the stored bytes, the hash chain and the
 * recall index only ever see the redacted text.
 *
 * @since 0.1.0
 */

/** One secret pattern and what replaces a match. @since 0.1.0 */
export interface Rule {
  readonly name: string
  readonly pattern: RegExp
  /** Replacement text; `$1`-style group references work as in `String.prototype.replace`. */
  readonly replacement: string
}

/** Rewrites secrets in a string. @since 0.1.0 */
export interface Redactor {
  readonly rules: ReadonlyArray<Rule>
  readonly redact: (text: string) => string
}

/**
 * The default rules: OpenAI/Anthropic-style `sk-...` keys, `Bearer` tokens, AWS access key ids, GitHub
 * tokens, Slack tokens, PEM private keys, and `password=`/`api_key=`-style assignments.
 * @since 0.1.0
 */
export const defaultRules: ReadonlyArray<Rule> = [
  { name: "api-key", pattern: /\bsk-(?:[A-Za-z]+-)*[A-Za-z0-9_-]{16,}/g, replacement: "[REDACTED:api-key]" },
  { name: "bearer", pattern: /\bBearer\s+[A-Za-z0-9._~+/=-]{12,}/g, replacement: "Bearer [REDACTED]" },
  { name: "aws-access-key", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, replacement: "[REDACTED:aws-key]" },
  {
    name: "github-token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b/g,
    replacement: "[REDACTED:github-token]"
  },
  { name: "slack-token", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, replacement: "[REDACTED:slack-token]" },
  {
    name: "private-key",
    pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
    replacement: "[REDACTED:private-key]"
  },
  {
    name: "assignment",
    pattern: /\b((?:api[_-]?key|secret|password|passwd|access[_-]?token)\s*[=:]\s*)["']?[^\s"',;]{6,}["']?/gi,
    replacement: "$1[REDACTED]"
  }
]

const global = (pattern: RegExp): RegExp =>
  pattern.flags.includes("g") ? pattern : new RegExp(pattern.source, `${pattern.flags}g`)

/** A redactor over the given rules (applied in order). @since 0.1.0 */
export const make = (rules: ReadonlyArray<Rule>): Redactor => {
  const compiled = rules.map((rule) => ({ ...rule, pattern: global(rule.pattern) }))
  return {
    rules,
    redact: (text) => compiled.reduce((current, rule) => current.replace(rule.pattern, rule.replacement), text)
  }
}

/** The default redactor. @since 0.1.0 */
export const defaults: Redactor = make(defaultRules)

/** A redactor that changes nothing (opt out explicitly). @since 0.1.0 */
export const none: Redactor = make([])

/**
 * Redact every string inside a JSON-like value (object keys are kept). What no rule changed is returned
 * as the same object, so `redactValue(r, value) === value` tells that nothing was redacted.
 * @since 0.1.0
 */
export const redactValue = (redactor: Redactor, value: unknown): unknown => {
  if (redactor.rules.length === 0) return value
  if (typeof value === "string") return redactor.redact(value)
  if (Array.isArray(value)) {
    const items = value.map((item) => redactValue(redactor, item))
    return items.every((item, index) => item === value[index]) ? value : items
  }
  if (typeof value === "object" && value !== null) {
    let changed = false
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) {
      const redacted = redactValue(redactor, item)
      if (redacted !== item) changed = true
      out[key] = redacted
    }
    return changed ? out : value
  }
  return value
}
