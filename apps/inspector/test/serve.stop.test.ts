// `ctxlog serve` stops on Ctrl-C (SIGINT) or SIGTERM as a viewer is meant to: the server closes, the
// command says so and exits 0 — not with the signal's 130, which `pnpm ctxlog serve` reported as
// "ELIFECYCLE Command failed" after every normal stop. The real bin, as a child process.
import { spawn } from "node:child_process"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { bundledBin, importTranscript, tempDir } from "./support/cli.js"

const temp = tempDir("ctxlog-serve-stop-")
afterAll(() => temp.cleanup())

const serveUntil = async (db: string, signal: NodeJS.Signals) => {
  const child = spawn(process.execPath, [bundledBin, "serve", "--db", db, "--port", "0"], {
    env: { ...process.env, NO_COLOR: "1" }
  })
  let stdout = ""
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      const url = /ctxlog viewer on (http:\/\/\S+)/.exec(stdout)?.[1]
      if (url !== undefined) resolve(url)
    })
    child.once("exit", (code) => reject(new Error(`serve exited ${code} before listening: ${stderr}`)))
  })
  const url = await listening
  const page = await fetch(url)
  assert.strictEqual(page.status, 200)
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  child.kill(signal)
  const code = await exited
  return { code, stdout, stderr, url }
}

describe("ctxlog serve stops cleanly", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`on ${signal}: exit 0, says it stopped, and the port is closed`, async () => {
      const db = join(temp.dir, `${signal}.db`)
      await importTranscript({ db, stream: "ctf", file: "01-sweagent-enigma-ctf-i-got-id.json" })
      const { code, stdout, stderr, url } = await serveUntil(db, signal)
      assert.strictEqual(code, 0, stderr)
      assert.include(stdout, `ctxlog viewer stopped (${signal})`)
      assert.strictEqual(stderr, "")
      const after = await fetch(url).then(
        () => "answered",
        () => "refused"
      )
      assert.strictEqual(after, "refused")
    })
  }
})
