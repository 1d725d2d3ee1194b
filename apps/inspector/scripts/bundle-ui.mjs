// Bundle the viewer (preact + htm + @tanstack/virtual-core) into dist/ui at build time, so
// `ctxlog serve` loads nothing from a CDN. esbuild: the bundler the workspace already resolves.
import { mkdirSync } from "node:fs"
import { build } from "esbuild"

const out = new URL("../dist/ui/", import.meta.url)
mkdirSync(out, { recursive: true })
await build({
  entryPoints: { app: new URL("../ui/app.js", import.meta.url).pathname },
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  outdir: out.pathname,
  logLevel: "warning"
})
await build({
  entryPoints: { app: new URL("../ui/app.css", import.meta.url).pathname },
  bundle: true,
  minify: true,
  outdir: out.pathname,
  logLevel: "warning"
})
