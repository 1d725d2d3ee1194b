/**
 * The default rules' hints only skip work: on text built from the pieces the rules look for (secret
 * names, separators, quotes, values, prose), the default redactor gives what the same rules without any
 * hint give.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import { propertyRuns } from "../../../vitest.property.js"
import * as Redaction from "../src/Redaction.js"

const unhinted = Redaction.make(
  Redaction.defaultRules.map(({ hint: _hint, ...rule }) => rule),
  { secretFields: true }
)

const piece = fc.constantFrom(
  "password",
  "PassPhrase",
  "client_secret",
  "api-key",
  "apiKey",
  "SESSION_KEY",
  "signing-key_b64",
  "token",
  "x.token",
  "secret_access_key",
  "aws_secret_access_key",
  "keyboard",
  "tokens",
  "export ",
  "=",
  ":",
  ":=",
  "=>",
  " ",
  "\t",
  "\n",
  '"',
  "'",
  "`",
  "#",
  ",",
  "&",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell reference, which the rules leave alone.
  "${VAR}",
  "<placeholder>",
  "hunter2hunter2",
  "s3cr3tValue99",
  "Uint8Array",
  "AKIAABCDEFGHIJKLMNOP",
  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "Bearer ",
  "Authorization: ",
  "abc.def-123456789xyz",
  "postgres://user:",
  "@host/db",
  "sk-",
  "ghp_",
  "0123456789abcdefghijklmnopqrstuvwxyz",
  "the context window",
  "summary"
)

describe("redaction hints", () => {
  it("the default redactor redacts as the same rules without hints do", () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 14 }), (pieces) => {
        const text = pieces.join("")
        assert.strictEqual(Redaction.defaults.redact(text), unhinted.redact(text), JSON.stringify(text))
      }),
      { numRuns: propertyRuns(2000) }
    )
  })
})
