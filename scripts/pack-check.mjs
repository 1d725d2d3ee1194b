// The packages as a user gets them: packs every publishable package, lints each tarball with publint and
// @arethetypeswrong/core (exports map, files, types resolution — the checks this script used to hand-write),
// then installs the tarballs with npm into an empty project in the temp dir next to `effect` and
// `better-sqlite3` (not `pg`), and checks there:
//   - one copy of `effect` (`npm ls effect`), the peer every package shares;
//   - `import` and `require` (Node's require(esm), on by default from Node 20.19) of every entry point;
//   - types resolve: `tsc` on a consumer file;
//   - SQLite works without `pg`, and opening PostgreSQL fails with a DriverMissing naming `pg`;
//   - the examples run: examples/promise-api.mjs (plain JS, Promise API), examples/one-line-layer.ts
//     (TypeScript, compiled by tsc, one-line layer) and the example in packages/core/README.md;
//   - with ai@6 and @openai/agents installed next to them (no peer conflict), the integration examples
//     examples/ai-sdk-middleware.mjs, examples/ai-sdk-prepare-step.mjs and examples/openai-agents-session.mjs
//     run and every render verifies; then ai@7 in place of ai@6, and both AI SDK examples again; with each
//     `ai` major, tsc accepts the middleware in `wrapLanguageModel` (ai 6: LanguageModelV3Middleware;
//     ai 7: its V4 LanguageModelMiddleware) and the step hooks in `generateText`.
// Usage: node scripts/pack-check.mjs [package-dir ...]   (default: every dir in packages/)
import { execFileSync } from "node:child_process"
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { checkPackage, createPackageFromTarballData } from "@arethetypeswrong/core"
import { publint } from "publint"
import { formatMessage } from "publint/utils"
import { packOnce } from "./pack-packages.mjs"
import { sqliteInstall } from "./sqlite-binding.mjs"

const root = resolve(import.meta.dirname, "..")
const dirs =
  process.argv.slice(2).length > 0
    ? process.argv.slice(2)
    : readdirSync(join(root, "packages")).map((d) => `packages/${d}`)
const work = mkdtempSync(join(tmpdir(), "ctxlog-pack-"))
const run = (cmd, args, cwd, env = process.env) =>
  execFileSync(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" })
// What attw's `--profile esm-only` ignores (its profiles.js): CommonJS resolution modes.
const esmOnlyIgnores = ["node10", "node16-cjs"]
const check = (ok, what) => {
  if (!ok) throw new Error(`pack-check: ${what}`)
  console.log(`ok: ${what}`)
}

try {
  const packages = []
  for (const { manifest, tarball } of await packOnce(dirs, work)) {
    const entries = Object.entries(manifest.exports)
      .filter(([key, target]) => target !== null && key !== "./package.json")
      .map(([key]) => (key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`))
    packages.push({
      name: manifest.name,
      tarball,
      entries,
      optionalPeers: Object.keys(manifest.peerDependenciesMeta ?? {})
    })
    const files = run("tar", ["-tzf", tarball], work)
    check(files.includes("package/LICENSE"), `${manifest.name} tarball holds LICENSE`)
    // publint and attw run in this process through their libraries (what their CLIs call), so TypeScript
    // and the linters load once for all the tarballs, not once per tarball per tool (ADR 0150).
    const data = readFileSync(tarball)
    // publint: exports/files/types consistency; strict turns its warnings into failures (as `--strict`).
    const linted = await publint({
      pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) },
      strict: true
    })
    const lintErrors = linted.messages.filter((m) => m.type === "error")
    check(
      lintErrors.length === 0,
      `publint ${manifest.name}${lintErrors.map((m) => `\n  ${formatMessage(m, linted.pkg) ?? m.code}`).join("")}`
    )
    // attw, esm-only profile: the packages are ESM-only (stated in each README); CommonJS callers use
    // Node's require(esm), which TypeScript's node16-cjs resolution (the skipped check) does not model.
    // The CLI's `--profile esm-only` is these two ignored resolutions; any other problem fails.
    const analysis = await checkPackage(createPackageFromTarballData(new Uint8Array(data)))
    check(analysis.types !== false, `attw ${manifest.name}: the package has types`)
    const problems = analysis.problems.filter(
      (problem) => !("resolutionKind" in problem) || !esmOnlyIgnores.includes(problem.resolutionKind)
    )
    check(
      problems.length === 0,
      `attw ${manifest.name}${problems.map((problem) => `\n  ${JSON.stringify(problem)}`).join("")}`
    )
  }

  const consumer = join(work, "consumer")
  mkdirSync(consumer)
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
  // better-sqlite3: the workspace's compiled binding when there is one (see sqlite-binding.mjs).
  const sqlite = sqliteInstall("^12.9.0")
  run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      ...packages.map((p) => p.tarball),
      "effect@^3.22.4",
      ...sqlite.args,
      "typescript@~5.9.3",
      "@types/node@^20.19.0"
    ],
    consumer
  )
  const reused = sqlite.after(consumer)
  if (reused !== undefined) console.log(reused)

  const effects = run("npm", ["ls", "effect", "--all", "--parseable"], consumer)
    .split("\n")
    .filter((line) => line.endsWith(`${join("node_modules", "effect")}`))
  check(effects.length === 1, `one copy of effect (npm ls effect: ${effects.length})`)
  check(!existsSync(join(consumer, "node_modules", "pg")), "pg is not installed (an optional peer)")

  // Entry points that load an optional peer at run time (the LangChain adapter: @langchain/core; the
  // conformance suites: vitest; the OpenTelemetry layer: @effect/opentelemetry) are typechecked below
  // but not imported; the rest must load without any optional peer installed.
  const needsPeer = new Set(["@ctxlog/providers/langchain", "@ctxlog/testing", "@ctxlog/providers/otel"])
  const runtimeEntries = packages.flatMap((p) => p.entries).filter((entry) => !needsPeer.has(entry))
  // Every entry imported in one process and required in another (ADR 0150: two node processes, not two
  // per entry); each entry's export names are printed as one JSON line, and a failed load names the entry.
  const loadAll = (how) =>
    run(
      "node",
      [
        "--no-warnings",
        ...(how === "import" ? ["--input-type=module"] : []),
        "-e",
        `for (const entry of ${JSON.stringify(runtimeEntries)}) {
  let keys
  try { keys = Object.keys(${how === "import" ? "await import(entry)" : "require(entry)"}) }
  catch (error) { console.error(\`${how} \${entry} failed: \${error?.stack ?? error}\`); process.exit(1) }
  console.log(JSON.stringify([entry, keys.join(",")]))
}`
      ],
      consumer
    )
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
  const imported = new Map(loadAll("import"))
  const required = new Map(loadAll("require"))
  for (const entry of runtimeEntries) {
    const keys = imported.get(entry) ?? ""
    check(keys !== "", `import ${entry}: ${keys.slice(0, 120)}`)
    check(required.get(entry) === keys, `require ${entry}`)
  }

  writeFileSync(
    join(consumer, "check.ts"),
    `${packages
      .flatMap((p) => p.entries)
      .map(
        (entry, index) =>
          `import * as P${index} from ${JSON.stringify(entry)}\nexport const k${index}: ReadonlyArray<string> = Object.keys(P${index})`
      )
      .join("\n")}
import { ContextService, Message, Window } from "@ctxlog/core"
import { Ctxlog } from "@ctxlog/memory"
import { Effect } from "effect"
// @ts-expect-error version is a number
export const wrong: string = Window.empty.version
export const program: Effect.Effect<number, unknown> = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  const { window } = yield* ctx.appendMessages("s", [Message.user("hi")])
  return window.version
}).pipe(Effect.provide(Ctxlog.sqlite({ filename: "typed.db" })))
`
  )
  writeFileSync(
    join(consumer, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ["node"]
      },
      files: ["check.ts"]
    })
  )
  run(join(consumer, "node_modules", ".bin", "tsc"), ["-p", "."], consumer)
  check(true, `tsc on a consumer of ${packages.map((p) => p.name).join(", ")}`)

  writeFileSync(
    join(consumer, "drivers.mjs"),
    `import { ContextService, Message } from "@ctxlog/core"
import { Ctxlog } from "@ctxlog/memory"
import { Effect } from "effect"
const append = Effect.flatMap(ContextService.ContextService, (ctx) => ctx.appendMessages("s", [Message.user("hi")]))
const { window } = await Effect.runPromise(append.pipe(Effect.provide(Ctxlog.sqlite({ filename: "drivers.db" }))))
console.log("sqlite version", window.version)
const failed = await Effect.runPromise(Effect.flip(append.pipe(Effect.provide(Ctxlog.postgres({ url: "postgres://127.0.0.1:1/x" })))))
console.log(failed._tag, failed.driver, failed.message)
`
  )
  const drivers = run("node", ["drivers.mjs"], consumer)
  check(drivers.includes("sqlite version 1"), "SQLite works without pg installed")
  check(
    /DriverMissing pg .*npm install pg/.test(drivers),
    `opening PostgreSQL without pg: ${drivers.split("\n")[1]?.slice(0, 160)}`
  )

  for (const example of ["promise-api.mjs", "one-line-layer.ts"])
    copyFileSync(join(root, "examples", example), join(consumer, example))
  const promiseExample = run("node", ["promise-api.mjs"], consumer)
  process.stdout.write(promiseExample)
  check(promiseExample.includes("reopened:"), "examples/promise-api.mjs (plain JavaScript, Promise API)")
  writeFileSync(
    join(consumer, "tsconfig.example.json"),
    JSON.stringify({
      compilerOptions: {
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        strict: true,
        outDir: "out",
        skipLibCheck: true,
        types: ["node"]
      },
      files: ["one-line-layer.ts"]
    })
  )
  run(join(consumer, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.example.json"], consumer)
  const layerExample = run("node", ["out/one-line-layer.js"], consumer)
  process.stdout.write(layerExample)
  check(layerExample.includes("loaded:"), "examples/one-line-layer.ts (TypeScript, one-line layer)")
  // The README example of @ctxlog/core (plain JS syntax inside its ts fence) runs as written.
  const readme = readFileSync(join(root, "packages", "core", "README.md"), "utf8")
  const fenced = /```ts\n([\s\S]*?)```/.exec(readme)?.[1]
  check(fenced !== undefined, "packages/core/README.md has an example")
  writeFileSync(join(consumer, "core-readme.mjs"), fenced ?? "")
  const coreExample = run("node", ["core-readme.mjs"], consumer)
  process.stdout.write(coreExample)
  check(coreExample.includes("SystemPromptSet"), "packages/core/README.md example")
  // The framework integrations next to the frameworks: ai 6 and @openai/agents (which brings openai 7)
  // install beside the tarballs without a peer conflict, and both integration examples run there.
  if (packages.some((p) => p.name === "@ctxlog/integrations")) {
    run(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "--ignore-scripts",
        "ai@^6.0.0",
        "@openai/agents@^0.20.0",
        "zod@^4.0.0"
      ],
      consumer
    )
    check(true, "ai@6 and @openai/agents install beside the tarballs (no ERESOLVE)")
    // The middleware and the step hooks as each `ai` major types them (one value for V3 and V4).
    writeFileSync(
      join(consumer, "check-ai-sdk.ts"),
      `import { ctxlogMiddleware, ctxlogPrepareStep } from "@ctxlog/integrations/ai-sdk"
import { generateText, wrapLanguageModel } from "ai"
declare const model: Parameters<typeof wrapLanguageModel>[0]["model"]
const middleware = ctxlogMiddleware({ sqlite: "typed.db", stream: "s1" })
export const wrapped = wrapLanguageModel({ model, middleware })
const steps = ctxlogPrepareStep({ sqlite: "typed.db", stream: "s2" })
export const agent = () =>
  generateText({ model: wrapped, prompt: "hi", prepareStep: steps.prepareStep, onStepFinish: steps.onStepFinish })
`
    )
    writeFileSync(
      join(consumer, "tsconfig.ai-sdk.json"),
      JSON.stringify({
        compilerOptions: {
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ["node"]
        },
        files: ["check-ai-sdk.ts"]
      })
    )
    run(join(consumer, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.ai-sdk.json"], consumer)
    check(true, "tsc: the middleware and the step hooks typed by ai@6")
    for (const [example, expected] of [
      ["ai-sdk-middleware.mjs", "renders: 3, verified: 3"],
      ["ai-sdk-prepare-step.mjs", "renders: 2, verified: 2"],
      ["openai-agents-session.mjs", "renders: 3, verified: 3\ncompactions: 1"]
    ]) {
      copyFileSync(join(root, "examples", example), join(consumer, example))
      const printed = run("node", [example], consumer)
      process.stdout.write(printed)
      check(printed.includes(expected), `examples/${example} (${expected.replace("\n", ", ")})`)
    }
    // AI SDK 7 (its manifest asks for Node 22; the middleware runs on Node 20): same example, ai@7 in place of 6.
    run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", "--ignore-scripts", "ai@^7.0.0"], consumer)
    check(true, "ai@7 installs beside the tarballs (no ERESOLVE)")
    run(join(consumer, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.ai-sdk.json"], consumer)
    check(true, "tsc: the middleware and the step hooks typed by ai@7 (V4 middleware)")
    // The middleware example streams its last call (streamText): streaming on ai@7 too.
    for (const [example, expected] of [
      ["ai-sdk-middleware.mjs", "renders: 3, verified: 3"],
      ["ai-sdk-prepare-step.mjs", "renders: 2, verified: 2"]
    ]) {
      const seven = run("node", [example], consumer)
      process.stdout.write(seven)
      check(seven.includes(expected), `examples/${example} on ai@7 (${expected})`)
    }
  }
  console.log(`pack-check: ${packages.length} packages ok`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
