// A real terminal for the interactive agent: a private tmux server (its own socket, no user config)
// running one command in a pane of a given size. The test types into it, pastes into it (as a
// bracketed paste when the program asked for one), presses keys, and reads the screen and scrollback
// as a person sees them. Plain helpers, no vitest imports.
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Whether tmux is installed (`apt-get install -y tmux`; `scripts/ensure-system-deps.mjs` installs it). */
export const tmuxMissing = (): string | undefined => {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" })
    return undefined
  } catch {
    return "tmux is not installed: run `apt-get install -y tmux` (Debian), or `node scripts/ensure-system-deps.mjs` as root"
  }
}

/** A pane running a command. */
export interface Terminal {
  /** Type text, key by key (no Enter). */
  readonly type: (text: string) => void
  /** Press keys by tmux name: `Enter`, `C-c`, `C-d`. */
  readonly press: (...keys: ReadonlyArray<string>) => void
  /** Paste text as a terminal pastes it (bracketed when the program switched bracketed paste on). */
  readonly paste: (text: string) => void
  /** The whole scrollback and screen, wrapped lines joined, escape codes left out. */
  readonly screen: () => string
  /** The scrollback and screen, one string per row as the terminal shows it (wrapped lines not joined). */
  readonly rows: () => ReadonlyArray<string>
  /** Resolve when the scrollback matches `pattern` `times` times; reject with the screen after `ms`. */
  readonly waitFor: (pattern: RegExp, times?: number, ms?: number) => Promise<string>
  readonly close: () => void
}

let count = 0

const shellWord = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`

/**
 * Start `command` in a `width`×`height` pane, in `cwd`, with exactly `env` added to a clean copy of
 * this process's environment (keys named in `unset` removed). When the command ends, the pane prints
 * `[exit N]` and stays, so its last words and exit code can be read.
 */
export const open = (options: {
  readonly command: ReadonlyArray<string>
  readonly width: number
  readonly height: number
  readonly cwd: string
  readonly env?: Readonly<Record<string, string>>
  readonly unset?: ReadonlyArray<string>
}): Terminal => {
  const socket = `ctxlog-test-${process.pid}-${++count}`
  const scratch = mkdtempSync(join(tmpdir(), "ctxlog-tmux-"))
  const tmux = (...args: ReadonlyArray<string>): string =>
    execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" })
  const env = [
    ...(options.unset ?? []).flatMap((name) => ["-u", name]),
    ...Object.entries(options.env ?? {}).map(([name, value]) => `${name}=${value}`)
  ]
  const line = `cd ${shellWord(options.cwd)} && env ${env.map(shellWord).join(" ")} ${options.command
    .map(shellWord)
    .join(" ")}; echo "[exit $?]"; sleep 600`
  tmux("new-session", "-d", "-s", "t", "-x", String(options.width), "-y", String(options.height), "sh", "-c", line)
  tmux("set-option", "-g", "history-limit", "10000")
  const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t")
  let pastes = 0
  return {
    type: (text) => {
      tmux("send-keys", "-t", "t", "-l", text)
    },
    press: (...keys) => {
      tmux("send-keys", "-t", "t", ...keys)
    },
    paste: (text) => {
      const file = join(scratch, `paste-${++pastes}.txt`)
      writeFileSync(file, text)
      tmux("load-buffer", "-b", "p", file)
      tmux("paste-buffer", "-p", "-d", "-b", "p", "-t", "t")
    },
    screen,
    rows: () => tmux("capture-pane", "-p", "-S", "-", "-t", "t").split("\n"),
    waitFor: (pattern, times = 1, ms = 60_000) =>
      new Promise((resolve, reject) => {
        const deadline = Date.now() + ms
        const poll = () => {
          const seen = screen()
          const matches = seen.match(new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`)) ?? []
          if (matches.length >= times) return resolve(seen)
          if (Date.now() > deadline) return reject(new Error(`no ${pattern} (×${times}) on the screen:\n${seen}`))
          setTimeout(poll, 100)
        }
        poll()
      }),
    close: () => {
      try {
        tmux("kill-server")
      } catch {
        // already gone
      }
      rmSync(scratch, { recursive: true, force: true })
    }
  }
}
