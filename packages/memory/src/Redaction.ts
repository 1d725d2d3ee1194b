/**
 * Redaction of secrets before an event is written: a secret that never enters the log cannot leak from
 * it. Every string in an event (message text, tool inputs and outputs, summaries, facts) is passed
 * through the rules before the event is encoded and hashed, so the stored bytes, the hash chain and the
 * recall index only ever see the redacted text.
 *
 * The default rules aim at two corpora at once (see `test/redaction.test.ts`): real-looking secrets
 * must not survive, and ordinary code must pass unchanged, since the model reads back what was
 * stored. So named-field rules only fire on a value that looks like a secret: a quoted literal, an
 * env-file line, or an unquoted value with a digit that is not a type name (`password: string)` and
 * `secret: Uint8Array` stay). Known limits: a secret in free prose ("the password is hunter2"), an
 * unquoted field value with no digit outside an env file, and a quoted value with spaces pass.
 *
 * Cost: rules are compiled once by {@link make}; each rule carries a cheap `hint` and a string that
 * matches no hint is returned untouched after one scan; {@link redactValue} walks values iteratively
 * (no recursion, so any depth) and copies only what changed.
 *
 * @since 0.1.0
 */

/** One secret pattern and what replaces a match. @since 0.1.0 */
export interface Rule {
  readonly name: string
  readonly pattern: RegExp
  /** Replacement text; `$1`-style group references work as in `String.prototype.replace`. */
  readonly replacement: string
  /**
   * Optional pre-check: when given, the rule only runs on text this matches. Must match every text
   * `pattern` can match (a necessary literal, say); a rule without a hint always runs.
   */
  readonly hint?: RegExp
}

/** Rewrites secrets in a string. @since 0.1.0 */
export interface Redactor {
  readonly rules: ReadonlyArray<Rule>
  readonly redact: (text: string) => string
  /**
   * The string under field `name` of a structured value: with `secretFields` on, a secret-looking
   * value under a secret name (`password`, `apiKey`, `client_secret`…) is replaced whole.
   */
  readonly redactField?: (name: string, value: string) => string
}

/** Options of {@link make}. @since 0.1.0 */
export interface Options {
  /** Also replace whole string values under secret field names in structured values (default false). */
  readonly secretFields?: boolean
}

/** Field names whose value is a secret when they end the name (`db_password`, `GITHUB_TOKEN`, `apiKey`). */
const secretWords =
  "(?:pass(?:word|wd|phrase)|secret|token|api[_-]?key|apikey|(?:access|private|secret|signing|encryption|master|session)[_-]?key)(?:[_-]?(?:base|b64|base64|value))?"

/** `source` with each letter outside a character class matching both cases (for patterns without the `i` flag). */
const anyCase = (source: string): string => {
  let out = ""
  let inClass = false
  for (const char of source) {
    if (char === "[") inClass = true
    else if (char === "]") inClass = false
    out += !inClass && /[a-z]/.test(char) ? `[${char}${char.toUpperCase()}]` : char
  }
  return out
}

/** A whole field name ending in one of {@link secretWords}, in either case. */
const secretName = `(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?${anyCase(secretWords)}`

/** `:`, `=`, `:=`, `=>`, with an optional closing quote of the name before it. */
const separator = `["']?\\s*(?::=|=>|[:=])\\s*`
/** Values that are references or placeholders, not secrets: `${X}`, `$X`, `<your-key>`, `{{x}}`, `***`, `%s`, `[REDACTED]`. */
const notPlaceholder = "(?![$<{*%\\[])"
/** An unquoted value: no spaces, quotes or code punctuation, at least 8 long, with a digit, not a PascalCase type name. */
const unquotedValue = `${notPlaceholder}(?=[^\\s"'\`]*\\d)(?!(?:[A-Z][a-z0-9]+)+(?![^\\s"'\`,&]))[^\\s"'\`(){}<>;,\\[\\]|&]{8,}`

const named = (name: string): string => `(${name}${separator})`

/**
 * What every secret-field rule needs: a secret word, then (within the name) more name characters, an
 * optional quote, spaces and `:` or `=`. Prose that only mentions a token or a key (most messages about
 * code) is left after this one scan instead of running the four field rules over it.
 */
const secretFieldHint = /(?:pass|secret|token|key)[A-Za-z0-9_-]*["']?\s*[:=]/i

/**
 * The default rules: private key blocks, cloud keys (AWS access key ids and secret access keys,
 * Google API keys), GitHub, GitLab, Slack, Stripe, npm, Hugging Face, Anthropic and OpenAI tokens,
 * JWTs, `Bearer` tokens, passwords in connection strings, and `password` / `secret` / `token` /
 * `api_key` fields in JSON, code literals, env files and YAML.
 * @since 0.1.0
 */
export const defaultRules: ReadonlyArray<Rule> = [
  {
    name: "private-key",
    pattern:
      /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=:,\s-]|\\[nr])*)/g,
    replacement: "[REDACTED:private-key]",
    hint: /-----BEGIN/
  },
  {
    name: "aws-secret-access-key",
    pattern:
      /((?:aws)?[_-]?secret[_-]?access[_-]?key["']?\s*(?::=|=>|[:=])\s*["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])/gi,
    replacement: "$1[REDACTED:aws-secret]",
    hint: /secret[_-]?access/i
  },
  {
    name: "aws-access-key",
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g,
    replacement: "[REDACTED:aws-key]",
    hint: /A[KSBC][IC]A/
  },
  {
    name: "google-api-key",
    pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g,
    replacement: "[REDACTED:google-key]",
    hint: /AIza/
  },
  {
    name: "github-token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})\b/g,
    replacement: "[REDACTED:github-token]",
    hint: /gh[pousr]_|github_pat_/
  },
  {
    name: "gitlab-token",
    pattern: /\bgl(?:pat|dt|ptt|rt|cbt|soat|oas)-[A-Za-z0-9_-]{20,}/g,
    replacement: "[REDACTED:gitlab-token]",
    hint: /gl[a-z]{2,4}-/
  },
  {
    name: "slack-token",
    pattern:
      /\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}|https:\/\/hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9/_-]+/g,
    replacement: "[REDACTED:slack-token]",
    hint: /xox|xapp-|hooks\.slack/
  },
  {
    name: "stripe-key",
    pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}/g,
    replacement: "[REDACTED:stripe-key]",
    hint: /_live_|_test_|whsec_/
  },
  {
    name: "npm-token",
    pattern: /\bnpm_[A-Za-z0-9]{36}\b/g,
    replacement: "[REDACTED:npm-token]",
    hint: /npm_/
  },
  {
    name: "huggingface-token",
    pattern: /\bhf_[A-Za-z0-9]{30,}\b/g,
    replacement: "[REDACTED:hf-token]",
    hint: /hf_/
  },
  {
    name: "anthropic-key",
    pattern: /\bsk-ant-(?:[a-z]+\d*-)?[A-Za-z0-9_-]{20,}/g,
    replacement: "[REDACTED:anthropic-key]",
    hint: /sk-ant-/
  },
  {
    name: "api-key",
    pattern: /\bsk-(?:[A-Za-z]+-)*[A-Za-z0-9_-]{16,}/g,
    replacement: "[REDACTED:api-key]",
    hint: /sk-/
  },
  {
    name: "jwt",
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
    replacement: "[REDACTED:jwt]",
    hint: /eyJ/
  },
  {
    name: "bearer",
    // After an `Authorization:` header any token; elsewhere only one with a digit ("Bearer authentication-based").
    pattern:
      /\b([Bb]earer\s+)(?:(?<=[Aa]uthorization["']?\s*[:=]\s*["']?[Bb]earer\s+)[A-Za-z0-9._~+/-]{12,}|(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{12,})=*/g,
    replacement: "$1[REDACTED]",
    hint: /earer/
  },
  {
    name: "connection-string-password",
    pattern: /\b([a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/@"'`]*:)(?!\[REDACTED)([^\s@/"'`]+)@/gi,
    replacement: "$1[REDACTED]@",
    hint: /:\/\//
  },
  {
    name: "secret-field-double-quoted",
    pattern: new RegExp(`${named(secretName)}"${notPlaceholder}((?:[^"\\\\\\s]|\\\\.){6,})"`, "gi"),
    replacement: '$1"[REDACTED]"',
    hint: secretFieldHint
  },
  {
    name: "secret-field-single-quoted",
    pattern: new RegExp(`${named(secretName)}'${notPlaceholder}([^'\\s\\\\]{6,})'`, "gi"),
    replacement: "$1'[REDACTED]'",
    hint: secretFieldHint
  },
  {
    name: "secret-field-env",
    pattern: new RegExp(
      `^([ \\t]*(?:export[ \\t]+)?${secretName}=)${notPlaceholder}[^\\s"'#()\`]{4,}(?=[ \\t]*(?:#.*)?$)`,
      "gim"
    ),
    replacement: "$1[REDACTED]",
    hint: secretFieldHint
  },
  {
    name: "secret-field-unquoted",
    // No `i` flag: the PascalCase test in the value must see case (`Uint8Array` is a type, not a secret).
    pattern: new RegExp(`${named(secretName)}${unquotedValue}(?=[\\s"'\`,&]|$)`, "g"),
    replacement: "$1[REDACTED]",
    hint: secretFieldHint
  }
]

const global = (pattern: RegExp): RegExp =>
  pattern.flags.includes("g") ? pattern : new RegExp(pattern.source, `${pattern.flags}g`)

/** A hint used with `test`: never global, so it carries no `lastIndex` state between calls. */
const stateless = (pattern: RegExp): RegExp =>
  pattern.flags.includes("g") || pattern.flags.includes("y")
    ? new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ""))
    : pattern

/** A whole field name that holds a secret. */
const secretField = new RegExp(`^${secretName}$`)
/** A field value worth hiding: at least 6 characters, no whitespace, not a reference or placeholder. */
const secretLiteral = new RegExp(`^${notPlaceholder}\\S{6,}$`)

/**
 * A redactor over the given rules (applied in order), compiled once. To extend the defaults:
 * `make([...defaultRules, mine], { secretFields: true })`.
 * @since 0.1.0
 */
export const make = (rules: ReadonlyArray<Rule>, options: Options = {}): Redactor => {
  const compiled = rules.map((rule) => ({
    pattern: global(rule.pattern),
    replacement: rule.replacement,
    hint: rule.hint === undefined ? undefined : stateless(rule.hint)
  }))
  // One scan for the common case: when every rule has a hint, text that matches none is left at once.
  // Only hints whose meaning survives the merge (no `m`, `s`, `u`, `v` flags) can be merged; a hint several
  // rules share is tried once.
  const anyHint = compiled.every((rule) => rule.hint !== undefined && /^[giy]*$/.test(rule.hint.flags))
    ? new RegExp([...new Set(compiled.map((rule) => `(?:${rule.hint?.source})`))].join("|"), "i")
    : undefined
  const redact = (text: string): string => {
    if (compiled.length === 0 || text.length === 0) return text
    if (anyHint !== undefined && !anyHint.test(text)) return text
    let current = text
    for (const rule of compiled) {
      if (rule.hint !== undefined && !rule.hint.test(current)) continue
      current = current.replace(rule.pattern, rule.replacement)
    }
    return current
  }
  if (options.secretFields !== true) return { rules, redact }
  const redactField = (name: string, value: string): string =>
    secretField.test(name) && secretLiteral.test(value) && !value.startsWith("[REDACTED") ? "[REDACTED]" : redact(value)
  return { rules, redact, redactField }
}

/** The default redactor. @since 0.1.0 */
export const defaults: Redactor = make(defaultRules, { secretFields: true })

/** A redactor that changes nothing (opt out explicitly). @since 0.1.0 */
export const none: Redactor = make([])

type Container = Array<unknown> | { [key: string]: unknown }

interface Frame {
  readonly source: Container
  readonly keys: ReadonlyArray<string> | undefined
  index: number
  copy: Container | undefined
  readonly parent: Frame | undefined
  readonly key: string | number
}

const isContainer = (value: unknown): value is Container => typeof value === "object" && value !== null

const frameOf = (source: Container, parent: Frame | undefined, key: string | number): Frame => ({
  source,
  keys: Array.isArray(source) ? undefined : Object.keys(source),
  index: 0,
  copy: undefined,
  parent,
  key
})

/**
 * Provider-opaque strings a message part carries: a thinking block's `signature` and `redactedData`, a
 * Responses reasoning item's `encryptedContent`, and the base64 `data` of an image or document source.
 * The provider checks them byte for byte (a changed signature is refused), and they are not text anyone
 * wrote, so rules never rewrite them.
 */
const opaqueFields: ReadonlySet<string> = new Set(["signature", "redactedData", "encryptedContent"])

const isOpaque = (container: object, key: string | number): boolean =>
  typeof key === "string" && (opaqueFields.has(key) || (key === "data" && Reflect.get(container, "type") === "base64"))

/** Set `frame`'s child `key`, copying the container on the first change. */
const write = (frame: Frame, key: string | number, value: unknown): void => {
  if (frame.copy === undefined) frame.copy = Array.isArray(frame.source) ? [...frame.source] : { ...frame.source }
  Reflect.set(frame.copy, key, value)
}

/**
 * Redact every string inside a JSON-like value (object keys are kept). What no rule changed is returned
 * as the same object, so `redactValue(r, value) === value` tells that nothing was redacted. The walk is
 * iterative (any depth), and a container met again on its own path (a cycle) is left as it is.
 * @since 0.1.0
 */
export const redactValue = (redactor: Redactor, value: unknown): unknown => {
  if (redactor.rules.length === 0) return value
  if (typeof value === "string") return redactor.redact(value)
  if (!isContainer(value)) return value
  const root = frameOf(value, undefined, 0)
  const onPath = new Set<unknown>([value])
  const stack: Array<Frame> = [root]
  for (;;) {
    const frame = stack[stack.length - 1]
    if (frame === undefined) break
    const length = Array.isArray(frame.source) ? frame.source.length : (frame.keys?.length ?? 0)
    if (frame.index >= length) {
      stack.pop()
      onPath.delete(frame.source)
      if (frame.parent !== undefined && frame.copy !== undefined) write(frame.parent, frame.key, frame.copy)
      continue
    }
    const key = frame.keys === undefined ? frame.index : (frame.keys[frame.index] ?? "")
    frame.index += 1
    const child: unknown = Reflect.get(frame.source, key)
    if (typeof child === "string") {
      if (isOpaque(frame.source, key)) continue
      const redacted =
        redactor.redactField !== undefined && typeof key === "string"
          ? redactor.redactField(key, child)
          : redactor.redact(child)
      if (redacted !== child) write(frame, key, redacted)
    } else if (isContainer(child) && !onPath.has(child)) {
      onPath.add(child)
      stack.push(frameOf(child, frame, key))
    }
  }
  return root.copy ?? value
}
