// Listings as a pipe receives them (no terminal: 80 columns): `streams` and `verify` keep the stream id
// whole — the value every other command needs — and fit 80 columns (stacked when one row per stream would
// not); `render --body` prints the request body alone, byte for byte: it parses as JSON (what `jq .`
// needs) and its SHA-256 is the hash the log recorded.
import { createHash } from "node:crypto"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ctxlog, tempDir, importTranscript } from "./support/cli.js"

const temp = tempDir("ctxlog-listings-")
const db = join(temp.dir, "log.db")
// As long as the agent's session ids.
const stream = "agent-20260301-101500-a1b2c3"
const piped = { NO_COLOR: "1", COLUMNS: "" }

afterAll(() => temp.cleanup())

beforeAll(async () => {
  await importTranscript({
    db,
    stream,
    budget: 6000,
    file: "01-sweagent-enigma-ctf-i-got-id.json",
    run: (args) => ctxlog(args, temp.dir)
  })
})

const fits = (stdout: string) => {
  for (const line of stdout.split("\n")) assert.isAtMost([...line].length, 80, line)
}

describe("listings through a pipe", () => {
  it("streams keeps the id whole within 80 columns", async () => {
    const listed = await ctxlog(["streams", "--db", db], temp.dir, piped)
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.match(listed.stdout, new RegExp(`^${stream}$`, "m"))
    assert.notInclude(listed.stdout, "…")
    fits(listed.stdout)
  })

  it("verify keeps the id whole within 80 columns", async () => {
    const verified = await ctxlog(["verify", "--db", db], temp.dir, piped)
    assert.strictEqual(verified.code, 0, verified.stderr)
    assert.match(verified.stdout, new RegExp(`^ok {4}${stream}(\\s|$)`, "m"))
    fits(verified.stdout)
  })

  it("render --body prints the exact request body alone", async () => {
    const described = await ctxlog(["render", "--db", db, "--turn", "3", stream, "--json"], temp.dir, piped)
    assert.strictEqual(described.code, 0, described.stderr)
    const { sha256 } = JSON.parse(described.stdout) as { readonly sha256: string }
    const body = await ctxlog(["render", "--db", db, "--turn", "3", stream, "--body"], temp.dir, piped)
    assert.strictEqual(body.code, 0, body.stderr)
    assert.strictEqual(createHash("sha256").update(body.stdout, "utf8").digest("hex"), sha256)
    const parsed = JSON.parse(body.stdout) as { readonly messages?: unknown }
    assert.isTrue(Array.isArray(parsed.messages))
  })
})
