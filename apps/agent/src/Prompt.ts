/**
 * The interactive prompt of `run`: what a person types, echoed and kept on screen, becomes one user
 * turn per message, not per line.
 *
 * - On a terminal the line is edited with `node:readline` writing to stdout, so typed text shows
 *   before Enter and stays in the scrollback after it.
 * - A paste is one message: bracketed paste mode is switched on, and every line that arrives between
 *   the terminal's paste markers is kept; the message is sent with the next Enter (text typed after
 *   the paste joins it).
 * - Multi-line mode: a line ending in `\` continues on the next line, and a line `"""` opens a block
 *   that the next `"""` line closes (also from a pipe, where every other line is one turn).
 * - While a turn runs the keyboard is held: Ctrl-C interrupts the turn (the process's SIGINT), any
 *   other key waits for the next prompt. At the prompt, Ctrl-C clears what was typed, or on an empty
 *   line ends the session (SIGINT: the resume hint is printed); Ctrl-D on an empty line ends it too.
 *
 * @since 0.3.0
 */
import * as readline from "node:readline"
import { PassThrough } from "node:stream"
import * as Effect from "effect/Effect"
import type { Ui } from "./Ui.js"

/** The line that opens and closes a multi-line block. @since 0.3.0 */
export const blockFence = '"""'

/** One line as the prompt received it. @since 0.3.0 */
export interface Line {
  readonly text: string
  /** The line arrived inside a bracketed paste (its Enter was the paste's, not the person's). */
  readonly pasted: boolean
}

/**
 * Lines into messages: the pure part of the prompt. `push` returns the message a line completes, or
 * `undefined` while the message goes on (a paste, a `\` continuation, an open `"""` block).
 * @since 0.3.0
 */
export interface Assembler {
  readonly push: (line: Line) => string | undefined
  /** Whether a message is being assembled (the continuation prompt shows). */
  readonly pending: () => boolean
  /** Drop what was assembled (Ctrl-C at the prompt). */
  readonly clear: () => void
}

/** A new assembler. @since 0.3.0 */
export const assembler = (): Assembler => {
  let lines: Array<string> = []
  let block = false
  const take = (last: string): string => {
    const text = [...lines, last].join("\n")
    lines = []
    block = false
    return text
  }
  return {
    push: ({ text, pasted }) => {
      if (pasted) {
        lines.push(text)
        return undefined
      }
      if (block) {
        if (text.trim() === blockFence) return take("")
        lines.push(text)
        return undefined
      }
      if (text.trim() === blockFence) {
        block = true
        return undefined
      }
      if (text.endsWith("\\")) {
        lines.push(text.slice(0, -1))
        return undefined
      }
      return take(text)
    },
    pending: () => lines.length > 0 || block,
    clear: () => {
      lines = []
      block = false
    }
  }
}

/** The prompt: the next message, `undefined` at the end of input. @since 0.3.0 */
export interface Prompt {
  readonly next: Effect.Effect<string | undefined>
  readonly close: Effect.Effect<void>
}

/** Options of {@link make}. @since 0.3.0 */
export interface Options {
  readonly input?: NodeJS.ReadStream
  readonly output?: NodeJS.WriteStream
}

const pasteOn = "\x1b[?2004h"
const pasteOff = "\x1b[?2004l"
const ctrlC = "\x03"

/** The prompt over stdin (a terminal, or a pipe read line by line). @since 0.3.0 */
export const make = (ui: Ui, options: Options = {}): Prompt => {
  const input = options.input ?? process.stdin
  const output = options.output ?? process.stdout
  const terminal = input.isTTY === true && output.isTTY === true
  const assemble = assembler()
  const ready: Array<string> = []
  let waiting: ((message: string | undefined) => void) | undefined
  let ended = false
  const deliver = (message: string | undefined) => {
    if (message === undefined) ended = true
    else ready.push(message)
    if (waiting === undefined) return
    const resolve = waiting
    waiting = undefined
    if (ready.length > 0) resolve(ready.shift())
    else if (ended) resolve(undefined)
  }

  if (!terminal) {
    const rl = readline.createInterface({ input, terminal: false })
    rl.on("line", (text) => {
      const message = assemble.push({ text, pasted: false })
      if (message !== undefined) deliver(message)
    })
    rl.on("close", () => {
      // What an open block or continuation held at the end of input is still a message.
      if (assemble.pending()) deliver(assemble.push({ text: "", pasted: false }) ?? "")
      deliver(undefined)
    })
    return {
      next: Effect.async<string | undefined>((resume) => {
        if (ready.length > 0 || ended) return resume(Effect.succeed(ready.shift()))
        waiting = (message) => resume(Effect.succeed(message))
        return Effect.sync(() => {
          waiting = undefined
        })
      }),
      close: Effect.sync(() => rl.close())
    }
  }

  // The terminal: raw keys from stdin go through a gate to readline. While a turn runs (`busy`) the
  // gate holds them, except Ctrl-C, which interrupts the turn.
  const gate = new PassThrough()
  let busy = true
  let held: Array<Buffer> = []
  const onData = (chunk: Buffer) => {
    if (!busy) {
      gate.write(chunk)
      return
    }
    if (chunk.includes(ctrlC)) {
      held = []
      process.kill(process.pid, "SIGINT")
      return
    }
    held.push(chunk)
  }
  input.setRawMode(true)
  input.on("data", onData)
  input.resume()
  output.write(pasteOn)
  const restore = () => output.write(pasteOff)
  process.once("exit", restore)

  const rl = readline.createInterface({
    input: gate,
    output,
    terminal: true,
    prompt: ui.accent("you› ")
  })
  let pasting = false
  gate.on("keypress", (_text: string | undefined, key: { readonly name?: string } | undefined) => {
    if (key?.name === "paste-start") pasting = true
    else if (key?.name === "paste-end") pasting = false
  })
  const showPrompt = () => {
    rl.setPrompt(assemble.pending() ? ui.dim("   … ") : ui.accent("you› "))
    rl.prompt()
  }
  rl.on("line", (text) => {
    const message = assemble.push({ text, pasted: pasting })
    if (message !== undefined) {
      busy = true
      deliver(message)
    } else if (!pasting) showPrompt()
  })
  rl.on("SIGINT", () => {
    if (rl.line.length > 0 || assemble.pending()) {
      // Ctrl-C on typed text clears it, as in a shell.
      assemble.clear()
      rl.write(null, { ctrl: true, name: "e" })
      rl.write(null, { ctrl: true, name: "u" })
      output.write("^C\n")
      showPrompt()
      return
    }
    process.kill(process.pid, "SIGINT")
  })
  rl.on("close", () => deliver(undefined))

  return {
    next: Effect.async<string | undefined>((resume) => {
      if (ready.length > 0 || ended) return resume(Effect.succeed(ready.shift()))
      waiting = (message) => resume(Effect.succeed(message))
      busy = false
      showPrompt()
      // Keys typed during the turn, now that there is a prompt for them.
      const keys = held
      held = []
      for (const chunk of keys) gate.write(chunk)
      return Effect.sync(() => {
        waiting = undefined
        busy = true
      })
    }),
    close: Effect.sync(() => {
      input.off("data", onData)
      rl.close()
      restore()
      process.off("exit", restore)
      input.setRawMode(false)
      input.pause()
    })
  }
}
