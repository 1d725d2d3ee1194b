/**
 * The default redaction rules against two corpora: real-looking secrets (none may survive) and
 * ordinary code and prose (every piece must pass byte for byte, since the model reads it back).
 * Then the walk (depth, cycles, identity), user rules, and the database file of a real SQLite store.
 */
import { readFileSync } from "node:fs"
import { ContextService, Message } from "@ctxlog/core"
import { freshStream } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Redaction, SqliteEventLog } from "../src/index.js"
import { tempFile, withContextOnly } from "./support/stores.js"

/** [where it appears, the text, the secret part that must not survive]. */
const secrets: ReadonlyArray<readonly [string, string, string]> = [
  ["AWS access key id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"],
  ["AWS STS key id", "ASIAY34FZKBOKMUTVV7A in the session", "ASIAY34FZKBOKMUTVV7A"],
  [
    "AWS secret, env",
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
  ],
  [
    "AWS secret, export",
    "export AWS_SECRET_ACCESS_KEY='je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY'",
    "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"
  ],
  [
    "AWS secret, JSON",
    '{"aws_access_key_id": "AKIAI44QH8DHBEXAMPLE", "aws_secret_access_key": "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"}',
    "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"
  ],
  [
    "AWS CLI output",
    '"Credentials": {"AccessKeyId": "ASIAJEXAMPLEXEG2JICEA", "SecretAccessKey": "9drTJvcXLB89EXAMPLELB8923FB892xMFI"}',
    "9drTJvcXLB89EXAMPLELB8923FB892xMFI"
  ],
  [
    "AWS credentials file",
    "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    "wJalrXUtnFEMI/K7MDENG"
  ],
  ["Google API key", "key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"],
  [
    "GitHub classic token",
    "git clone https://ghp_R7mZq4Xw2Lk9Vb3Nc8Hd5Tf1Yp6Js0Ga2Eu4@github.com/o/r",
    "ghp_R7mZq4Xw2Lk9Vb3Nc8Hd5Tf1Yp6Js0Ga2Eu4"
  ],
  [
    "GitHub fine-grained token",
    "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV01234",
    "github_pat_11ABCDEFG0123456789"
  ],
  [
    "GitHub app token",
    "GH_TOKEN ghs_16C7e42F292c6912E7710c838347Ae178B4a used",
    "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
  ],
  ["GitLab token", "PRIVATE-TOKEN: glpat-xK3vT9qLm2Rz8WpY4nBc", "glpat-xK3vT9qLm2Rz8WpY4nBc"],
  [
    "Slack bot token",
    "SLACK_BOT_TOKEN=xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "xoxb-1234567890123"
  ],
  ["Slack user token", "use xoxp-2210535565-2210535575-2212304851-a3b1f4 now", "xoxp-2210535565"],
  [
    "Slack webhook",
    "POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
  ],
  ["Stripe live key", "Stripe.apiKey = sk_live_51H8zQ2Abc3DEF4ghi5JKL6mno", "sk_live_51H8zQ2Abc3DEF4ghi5JKL6mno"],
  ["Stripe restricted key", "rk_test_4eC39HqLyjWDarjtT1zdp7dc", "rk_test_4eC39HqLyjWDarjtT1zdp7dc"],
  ["Stripe webhook secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
  [
    "OpenAI project key",
    "OPENAI_API_KEY=sk-proj-Xq9T2vLm8Rz4WpY7nBc3Kd6Fg1Hj5Ns0Qa2Eu4Io8",
    "Xq9T2vLm8Rz4WpY7nBc3Kd6Fg1Hj5Ns0Qa2Eu4Io8"
  ],
  ["OpenAI legacy key", "client = OpenAI(api_key=sk-4f9aB2cD8eF1gH7iJ3kL6mN0oP5qR)", "4f9aB2cD8eF1gH7iJ3kL6mN0oP5qR"],
  [
    "Anthropic key",
    '{"x-api-key": "sk-ant-api03-R2v9Lm4Xq8Tz1Wp7Yn3Bc6Kd0Fg5Hj2Ns9Qa4Eu8Io1Ab-7cDeFgAA"}',
    "R2v9Lm4Xq8Tz1Wp7Yn3Bc6Kd0Fg5Hj2Ns9Qa4Eu8Io1Ab"
  ],
  ["npm token", "//registry.npmjs.org/:_authToken=npm_Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8Ii9Jj0Kk1Ll2", "npm_Aa1Bb2Cc3Dd4Ee5"],
  ["Hugging Face token", "HF_TOKEN hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"],
  [
    "JWT",
    "cookie session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
  ],
  [
    "Authorization header, letters only",
    "Authorization: Bearer abcdefghijklmnop.qrstuvwx",
    "abcdefghijklmnop.qrstuvwx"
  ],
  [
    "Bearer header",
    "curl -H 'Authorization: Bearer 7f3a9c2e1b8d4f6a0e5c' https://api.example.com",
    "7f3a9c2e1b8d4f6a0e5c"
  ],
  [
    "RSA private key",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----",
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
  ],
  [
    "OpenSSH private key, escaped in JSON",
    '"key": "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\\n-----END OPENSSH PRIVATE KEY-----"',
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
  ],
  [
    "truncated private key",
    "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49\n[output truncated]",
    "MHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY"
  ],
  ["PostgreSQL URL", "DATABASE_URL=postgres://app:S3cr3t-Pa55@db.internal:5432/app", "S3cr3t-Pa55"],
  ["MongoDB SRV URL", 'uri = "mongodb+srv://admin:hunter2xyz@cluster0.mongodb.net/test"', "hunter2xyz"],
  ["Redis URL without user", "redis://:p4ssw0rd!@cache:6379/0", "p4ssw0rd!"],
  ["JSON password", '{"username": "admin", "password": "Tr0ub4dor&3"}', "Tr0ub4dor&3"],
  ["JSON password, no digit", '{"user":"deploy","password":"correcthorsebattery"}', "correcthorsebattery"],
  ["JSON client secret", '{"client_id": "abc", "client_secret": "9f8e7d6c5b4a3f2e1d0c"}', "9f8e7d6c5b4a3f2e1d0c"],
  ["JSON access token", '{"access_token": "ya29.a0AfH6SMBx3kZ9LqT", "token_type": "Bearer"}', "ya29.a0AfH6SMBx3kZ9LqT"],
  ["env password", "DB_PASSWORD=correcthorse", "correcthorse"],
  ["env secret, quoted", 'JWT_SECRET="s0me-l0ng-r4ndom-str1ng"', "s0me-l0ng-r4ndom-str1ng"],
  ["env token with comment", "API_TOKEN=abcd1234efgh # staging", "abcd1234efgh"],
  ["YAML password", "database:\n  password: Sup3rS3cret!\n  host: db", "Sup3rS3cret!"],
  ["code literal", 'const dbPassword = "hunter2-prod"', "hunter2-prod"],
  ["Python literal", "SECRET_KEY = 'django-insecure-x8#k2!p@q9z'", "django-insecure-x8#k2!p@q9z"],
  ["PHP array", "'password' => 'letmein2024'", "letmein2024"],
  ["Go literal", 'apiKey := "a1b2c3d4e5f6a7b8"', "a1b2c3d4e5f6a7b8"],
  ["CLI flag", "mysql -u root --password=r00tP4ss host", "r00tP4ss"],
  ["query string", "GET /callback?code=1&access_token=9a8b7c6d5e4f3a2b&state=x", "9a8b7c6d5e4f3a2b"]
]

/** Ordinary code and prose that must pass unchanged. */
const ordinary: ReadonlyArray<string> = [
  "export const login = (user: string, password: string): Effect.Effect<Session, AuthError> =>",
  "function verify(token: string, secret: Uint8Array): boolean {",
  "interface Credentials {\n  username: string\n  password: string\n  secret: Uint8Array\n  apiKey?: Redacted<string>\n}",
  "  private readonly token: string,",
  "def login(username, password):\n    password = getpass.getpass()\n    return check(password)",
  "const apiKey = process.env.OPENAI_API_KEY ?? config.apiKey",
  "export OPENAI_API_KEY=$(cat ~/.openai-key)",
  `password: "\${{ secrets.DB_PASSWORD }}"`,
  `DB_PASSWORD="\${DB_PASSWORD}"`,
  'api_key = "<your-api-key>"',
  "password: '********'",
  `headers: { "x-api-key": apiKey, authorization: \`Bearer \${token}\` }`,
  'fetch(url, { credentials: "include", method: "POST" })',
  'const tokenizer = "cl100k_base"\nconst tokenType = "bearer"',
  '{"max_tokens": 4096, "temperature": 0.2, "stop": ["</s>"]}',
  '{"eos_token": "</s>", "pad_token": "<pad>", "unk_token": "[UNK]"}',
  "MAX_TOKENS=4096\nSECRET_LENGTH=32\nTOKEN_LIMIT=8192",
  "max_tokens: 1024\nmaxOutputTokens: 2048",
  "password_hash TEXT NOT NULL, password_reset_at TIMESTAMPTZ",
  '"token_type": "Bearer", "expires_in": 3600',
  "Please reset your password from the settings page; the secret is to keep the token short-lived.",
  "Bearer authentication-based APIs are common.\n  the task-list and a bearer of news stay; scikit-learn and disk-space-monitor too",
  "https://example.com:8443/path?q=1 and git@github.com:org/repo.git and http://localhost:3000/api",
  "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  '"integrity": "sha512-Q9F2mE0hQv7k8aMvXuL1ZC9c0Z+3rT0pT8bq1y5Xc2Y1Y7vZ4z9o8s1h2w3e4r5t6y7u8i9o0p=="',
  "commit 3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a\nAuthor: Jane Doe <jane@example.com>",
  "id 018f3c2a-7b4e-7c1d-9e2f-3a4b5c6d7e8f at version 12",
  "if (!token) throw new Error('missing token')",
  "const { password, ...rest } = user",
  "type Secret = string | Redacted.Redacted<string>",
  "readonly secretName: string; readonly tokenCount: number",
  "- name: password\n  in: query\n  schema:\n    type: string",
  '<input type="password" name="password" autocomplete="current-password" />',
  "AKIA is the prefix of AWS access key ids; ghp_ is GitHub's.",
  'The JWT header starts with eyJ because base64 of {" is eyJ.',
  "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
  "token = next_token(stream)",
  "secret = Buffer.from(raw, 'base64')",
  "passwordInput.value = ''",
  `const sessionKey = \`session:\${id}\``
]

describe("default redaction rules", () => {
  for (const [label, text, secret] of secrets) {
    it(`removes ${label}`, () => {
      const redacted = Redaction.defaults.redact(text)
      assert.notInclude(redacted, secret, redacted)
      assert.include(redacted, "[REDACTED", redacted)
    })
  }

  it("leaves every piece of the ordinary corpus byte for byte", () => {
    const changed = ordinary.filter((text) => Redaction.defaults.redact(text) !== text)
    assert.deepStrictEqual(
      changed.map((text) => [text, Redaction.defaults.redact(text)]),
      []
    )
  })

  it("keeps the field name and quotes around a redacted value, so JSON stays JSON", () => {
    const redacted = Redaction.defaults.redact(
      '{"user":"a","password":"Tr0ub4dor&3","nested":{"api_key":"abc123def456"}}'
    )
    assert.deepStrictEqual(JSON.parse(redacted), {
      user: "a",
      password: "[REDACTED]",
      nested: { api_key: "[REDACTED]" }
    })
  })

  it("redacting twice changes nothing more", () => {
    for (const [, text] of secrets) {
      const once = Redaction.defaults.redact(text)
      assert.strictEqual(Redaction.defaults.redact(once), once)
    }
  })
})

describe("redactValue", () => {
  it("walks 100,000 levels of nesting without overflowing the stack", () => {
    let value: unknown = "sk-proj-Xq9T2vLm8Rz4WpY7nBc3Kd6Fg1Hj5Ns0Qa2"
    for (let depth = 0; depth < 50_000; depth += 1) value = depth % 2 === 0 ? [value] : { inner: value }
    const redacted = Redaction.redactValue(Redaction.defaults, value)
    assert.notStrictEqual(redacted, value)
    let leaf: unknown = redacted
    for (let depth = 49_999; depth >= 0; depth -= 1) {
      leaf = depth % 2 === 0 ? (Array.isArray(leaf) ? leaf[0] : undefined) : Reflect.get(Object(leaf), "inner")
    }
    assert.strictEqual(leaf, "[REDACTED:api-key]")
  })

  it("returns the same object when nothing changed, and copies only the changed path", () => {
    const untouched = { a: ["plain", { b: "text" }], c: 1 }
    assert.strictEqual(Redaction.redactValue(Redaction.defaults, untouched), untouched)
    const value = { keep: { x: "plain" }, change: ["DB_PASSWORD=correcthorse"] }
    const redacted = Redaction.redactValue(Redaction.defaults, value)
    assert.deepStrictEqual(redacted, { keep: { x: "plain" }, change: ["DB_PASSWORD=[REDACTED]"] })
    assert.strictEqual(Reflect.get(Object(redacted), "keep"), value.keep)
    assert.deepStrictEqual(value.change, ["DB_PASSWORD=correcthorse"])
  })

  it("terminates on a cycle, leaving the back edge as it is", () => {
    const value: { text: string; self?: unknown } = { text: "ghp_R7mZq4Xw2Lk9Vb3Nc8Hd5Tf1Yp6Js0Ga2Eu4" }
    value.self = value
    const redacted = Redaction.redactValue(Redaction.defaults, value)
    assert.strictEqual(Reflect.get(Object(redacted), "text"), "[REDACTED:github-token]")
    assert.strictEqual(Reflect.get(Object(redacted), "self"), value)
  })

  it("never rewrites provider-opaque strings: thinking signatures, encrypted reasoning, base64 media", () => {
    // Each value would match a default rule if it were text someone wrote.
    const secretLooking = "AKIAIOSFODNN7EXAMPLE DB_PASSWORD=correcthorse"
    const message: Message.MessageInput = {
      role: "assistant",
      parts: [
        {
          type: "reasoning",
          text: "DB_PASSWORD=correcthorse",
          signature: secretLooking,
          redactedData: secretLooking,
          encryptedContent: secretLooking
        },
        { type: "image", source: { type: "base64", mediaType: "image/png", data: secretLooking } },
        { type: "image", source: { type: "url", url: "https://example.com/x.png?data=1" } }
      ]
    }
    const redacted = Redaction.redactValue(Redaction.defaults, message)
    const parts = Reflect.get(Object(redacted), "parts")
    assert.deepStrictEqual(parts[0], {
      type: "reasoning",
      text: "DB_PASSWORD=[REDACTED]",
      signature: secretLooking,
      redactedData: secretLooking,
      encryptedContent: secretLooking
    })
    assert.strictEqual(parts[1], message.parts[1])
    // A field named `data` that is not base64 media is text like any other.
    assert.deepStrictEqual(Redaction.redactValue(Redaction.defaults, { data: "DB_PASSWORD=correcthorse" }), {
      data: "DB_PASSWORD=[REDACTED]"
    })
  })

  it("redacts a string under a secret field name of a structured value, and only there", () => {
    const value = {
      credentials: { user: "deploy", password: "Tr0ub4dor&3", apiKey: "a1b2c3d4e5f6" },
      tokenizer: "cl100k_base",
      password: "",
      secret: "<from-vault>",
      note: "Tr0ub4dor&3 alone is just text"
    }
    assert.deepStrictEqual(Redaction.redactValue(Redaction.defaults, value), {
      credentials: { user: "deploy", password: "[REDACTED]", apiKey: "[REDACTED]" },
      tokenizer: "cl100k_base",
      password: "",
      secret: "<from-vault>",
      note: "Tr0ub4dor&3 alone is just text"
    })
    // A redactor built from rules alone does not look at field names.
    const plain = Redaction.make(Redaction.defaultRules)
    assert.deepStrictEqual(Redaction.redactValue(plain, { password: "Tr0ub4dor&3" }), { password: "Tr0ub4dor&3" })
    const extended = Redaction.make(Redaction.defaultRules, { secretFields: true })
    assert.deepStrictEqual(Redaction.redactValue(extended, { password: "Tr0ub4dor&3" }), { password: "[REDACTED]" })
  })

  it("applies user rules, with or without a hint, and a global hint flag does not skip every other string", () => {
    const ticket = Redaction.make([
      { name: "ticket", pattern: /TICKET-\d+/, replacement: "TICKET-?" },
      { name: "code", pattern: /CODE-\d+/g, replacement: "CODE-?", hint: /CODE-/g }
    ])
    const value = { a: "see TICKET-12 and TICKET-13", b: ["CODE-1", "CODE-2", "CODE-3"], c: 3, d: null }
    assert.deepStrictEqual(Redaction.redactValue(ticket, value), {
      a: "see TICKET-? and TICKET-?",
      b: ["CODE-?", "CODE-?", "CODE-?"],
      c: 3,
      d: null
    })
    assert.strictEqual(Redaction.redactValue(Redaction.none, value), value)
    // A multiline hint keeps its meaning: the second line still runs the rule.
    const multiline = Redaction.make([{ name: "line", pattern: /^KEY .*$/gm, replacement: "KEY ?", hint: /^KEY /m }])
    assert.strictEqual(multiline.redact("first\nKEY abc"), "first\nKEY ?")
    const extended = Redaction.make([
      ...Redaction.defaultRules,
      { name: "ticket", pattern: /TICKET-\d+/g, replacement: "T" }
    ])
    assert.strictEqual(extended.redact("TICKET-9\nDB_PASSWORD=correcthorse"), "T\nDB_PASSWORD=[REDACTED]")
  })
})

describe("secrets never reach the database file", () => {
  it.scoped("AWS keys in env and JSON form and a JSON password are absent from the SQLite file", () => {
    const filename = tempFile()
    const secretsWritten = [
      "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
      "Tr0ub4dor&3",
      "AKIAIOSFODNN7EXAMPLE"
    ]
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const stream = freshStream("secrets")
      yield* ctx.appendMessages(stream, [
        Message.user(`AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=${secretsWritten[0]}`),
        Message.assistant("Writing the config.", [
          Message.toolCall("call_1", "write_config", {
            config: `{"aws_secret_access_key": "${secretsWritten[1]}", "password": "${secretsWritten[2]}"}`,
            credentials: { user: "deploy", password: secretsWritten[2] ?? "" }
          })
        ])
      ])
    }).pipe(
      Effect.provide(withContextOnly(SqliteEventLog.layer({ filename }))),
      Effect.andThen(() => {
        // After the store closed: the raw bytes of the file (and its WAL, if any) hold none of them.
        const bytes = [filename, `${filename}-wal`].flatMap((file) => {
          try {
            return [readFileSync(file).toString("latin1")]
          } catch {
            return []
          }
        })
        assert.isAbove(bytes.join("").length, 0)
        for (const secret of secretsWritten) assert.notInclude(bytes.join(""), secret)
        assert.include(bytes.join(""), "[REDACTED")
      })
    )
  })
})
