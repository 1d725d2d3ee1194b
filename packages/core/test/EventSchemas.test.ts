/**
 * Upgrades: every event type's schema is fingerprinted per schema version in
 * `fixtures/event-schemas.json`, and `fixtures/events-by-version.jsonl` holds one stored event of every
 * type at every version from 1 to the current one. A schema that changes without a version bump fails
 * here; so does a bump without a stored sample of the old version that still decodes (through the
 * upcasters) to a valid current event. After a deliberate bump with its upcaster, record the new
 * fingerprint with `CTXLOG_UPDATE_SCHEMAS=1 pnpm --filter @ctxlog/core test EventSchemas` and add a sample
 * of the new version.
 */
import { createHash } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SchemaAST from "effect/SchemaAST"
import { EventCodec, WindowEvent } from "../src/index.js"

const fingerprintsFile = new URL("./fixtures/event-schemas.json", import.meta.url)
const samplesFile = new URL("./fixtures/events-by-version.jsonl", import.meta.url)

const tagOf = (member: (typeof WindowEvent.WindowEvent.members)[number]): string => {
  const ast = member.ast
  const tag = SchemaAST.isTypeLiteral(ast) ? ast.propertySignatures.find((field) => field.name === "_tag") : undefined
  return tag !== undefined && SchemaAST.isLiteral(tag.type) ? String(tag.type.literal) : "?"
}

// The type and encoded sides of the schema as the AST prints them: field names, optionality, literals,
// refinements and nested structs (a recursive JSON value prints as a suspended schema).
const fingerprint = (member: (typeof WindowEvent.WindowEvent.members)[number]): string =>
  createHash("sha256")
    .update(`${String(SchemaAST.typeAST(member.ast))}\n${String(SchemaAST.encodedAST(member.ast))}`)
    .digest("hex")

const current = Object.fromEntries(
  WindowEvent.WindowEvent.members.map((member) => {
    const tag = tagOf(member)
    return [
      tag,
      { version: WindowEvent.isEventType(tag) ? WindowEvent.schemaVersions[tag] : 0, fingerprint: fingerprint(member) }
    ]
  })
)

describe("event schema versions", () => {
  it("no event schema changed without a version bump", () => {
    if (process.env.CTXLOG_UPDATE_SCHEMAS === "1") {
      const recorded: Record<string, Record<string, string>> = JSON.parse(readFileSync(fingerprintsFile, "utf8"))
      for (const [tag, { version, fingerprint: print }] of Object.entries(current)) {
        recorded[tag] = { ...recorded[tag], [String(version)]: print }
      }
      writeFileSync(fingerprintsFile, `${JSON.stringify(recorded, null, 2)}\n`)
    }
    const recorded: Record<string, Record<string, string>> = JSON.parse(readFileSync(fingerprintsFile, "utf8"))
    for (const [tag, { version, fingerprint: print }] of Object.entries(current)) {
      const known = recorded[tag]?.[String(version)]
      assert.isDefined(known, `${tag} v${version} has no recorded fingerprint: a new type or a new version?`)
      assert.strictEqual(
        print,
        known,
        `the schema of ${tag} changed but its version is still ${version}: bump schemaVersions.${tag} and add an upcaster`
      )
    }
  })

  it.effect("a stored sample of every type at every version decodes through the upcasters", () =>
    Effect.gen(function* () {
      const lines = readFileSync(samplesFile, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
      const seen = new Set<string>()
      for (const [index, line] of lines.entries()) {
        const stored: { type: string; schemaVersion: number; data: unknown } = JSON.parse(line)
        seen.add(`${stored.type}@${stored.schemaVersion}`)
        const event = yield* EventCodec.decode(
          { type: stored.type, schemaVersion: stored.schemaVersion, data: JSON.stringify(stored.data) },
          { line: index + 1 }
        )
        assert.strictEqual(event._tag, stored.type)
      }
      for (const type of WindowEvent.eventTypes) {
        for (let version = 1; version <= WindowEvent.schemaVersions[type]; version++) {
          assert.isTrue(
            seen.has(`${type}@${version}`),
            `no stored sample of ${type} v${version} in events-by-version.jsonl`
          )
        }
      }
    })
  )
})
