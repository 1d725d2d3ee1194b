// Acceptance: every shared transcript imports with `--format openai-chat`; then verify (every render
// rebuilds to its hash), window, render, blame, diff and whatif work on the result.
import { readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { ctxlogInProcess, tempDir, transcripts, importTranscript } from "./support/cli.js"

const temp = tempDir("ctxlog-acceptance-")
afterAll(() => temp.cleanup())

const parse = (result: { readonly code: number; readonly stdout: string; readonly stderr: string }) => {
  assert.strictEqual(result.code, 0, result.stderr)
  const value: unknown = JSON.parse(result.stdout)
  return typeof value === "object" && value !== null ? Object.fromEntries(Object.entries(value)) : {}
}

const files = readdirSync(transcripts).filter((name) => name.endsWith(".json"))

describe("import --format openai-chat on every shared transcript", () => {
  it("finds the transcripts", () => {
    assert.isAtLeast(files.length, 4)
  })

  for (const file of files) {
    it(`${file}: import, verify --renders, window, render, blame, diff, whatif`, async () => {
      const db = join(temp.dir, `${file}.db`)
      const stream = file.replace(/\.json$/, "")
      const imported = parse(await importTranscript({ db, budget: 16_000, json: true, file }))
      assert.strictEqual(imported.stream, stream)
      const head = Number(imported.version)
      assert.isAbove(head, 10)

      const verified = parse(await ctxlogInProcess(["verify", "--db", db, "--renders", "--json"]))
      assert.strictEqual(verified.ok, true)
      const [check] = Array.isArray(verified.streams) ? verified.streams : []
      const renders = Number(Object.fromEntries(Object.entries(check ?? {})).rendersVerified)
      assert.isAbove(renders, 0)

      const window = parse(await ctxlogInProcess(["window", "--db", db, stream, "--json"]))
      assert.strictEqual(Object.fromEntries(Object.entries(window.usage ?? {})).budget, 16000)

      // verify --renders rebuilt every render; `render --turn` on a spread of turns prints them verified.
      for (let turn = 1; turn <= renders; turn += Math.max(1, Math.floor(renders / 6))) {
        const render = parse(await ctxlogInProcess(["render", "--db", db, "--turn", String(turn), stream, "--json"]))
        assert.strictEqual(render.verified, true, String(render.problem))
        assert.strictEqual(render.turn, turn)
      }

      const blame = parse(await ctxlogInProcess(["blame", "--db", db, stream, "--json"]))
      assert.strictEqual(blame.version, head)
      const diff = parse(
        await ctxlogInProcess(["diff", "--db", db, stream, String(Math.floor(head / 2)), String(head), "--json"])
      )
      assert.strictEqual(diff.to, head)

      const config = join(temp.dir, `${file}.whatif.json`)
      writeFileSync(
        config,
        JSON.stringify({
          compaction: {},
          builder: { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow: 8000 }
        })
      )
      const whatif = parse(await ctxlogInProcess(["whatif", "--db", db, stream, "--config", config, "--json"]))
      assert.strictEqual(Array.isArray(whatif.calls) ? whatif.calls.length : 0, renders)
    })
  }
})
