// The viewer's browser tests' shared set-up: the UI bundled, `ctxlog serve`'s server on a SQLite log and
// Debian's chromium (headless, a fresh profile); `close` stops all three, also when a test failed.
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { type BrowserContext, chromium } from "playwright-core"
import { Server, Source } from "../../src/index.js"

/** Debian's chromium (no browser downloads on this machine). */
export const executablePath = "/usr/bin/chromium"
/** Where the browser tests write their screenshots. */
export const artifacts = fileURLToPath(new URL("../../test-artifacts/", import.meta.url))

/** A viewer served on a SQLite log and a browser to look at it with. */
export interface Viewer {
  readonly url: string
  readonly browser: BrowserContext
  /** The scope the server runs in (a test may start another server in it); closed by `close`. */
  readonly scope: Scope.CloseableScope
  readonly close: () => Promise<void>
}

const bundle = () =>
  new Promise<void>((resolve, reject) => {
    execFile(process.execPath, [fileURLToPath(new URL("../../scripts/bundle-ui.mjs", import.meta.url))], (error) =>
      error === null ? resolve() : reject(error)
    )
  })

/** Bundle the UI, serve `db` on a free loopback port with `options`, and launch chromium at `viewport`. */
export const startViewer = async (
  db: string,
  options: Omit<Parameters<typeof Server.start>[1], "port" | "host"> = {},
  viewport: { readonly width: number; readonly height: number } = { width: 1280, height: 800 }
): Promise<Viewer> => {
  if (!existsSync(executablePath)) {
    throw new Error(`chromium is not installed at ${executablePath}: run \`apt-get install -y chromium\` (Debian)`)
  }
  mkdirSync(artifacts, { recursive: true })
  await bundle()
  const scope = Effect.runSync(Scope.make())
  const profile = mkdtempSync(join(tmpdir(), "ctxlog-chromium-"))
  const close = async (browser?: BrowserContext) => {
    await browser?.close()
    rmSync(profile, { recursive: true, force: true })
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  try {
    const running = await Effect.runPromise(
      Effect.flatMap(Source.sqlite(db), (source) =>
        Server.start(source, { ...options, port: 0, host: "127.0.0.1" })
      ).pipe(Scope.extend(scope))
    )
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-quic",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run"
      ],
      viewport
    })
    return { url: running.url, browser, scope, close: () => close(browser) }
  } catch (error) {
    await close()
    throw error
  }
}
