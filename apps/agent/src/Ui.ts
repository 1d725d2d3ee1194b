/**
 * The terminal: streamed answer text, a spinner while a model call or a compaction runs, and one
 * compact status line after each turn. Colours and the spinner are off when stdout is not a TTY or
 * `NO_COLOR` is set; then every line is plain text, fit for a log file or a test (and there is no
 * spinner line at all).
 *
 * @since 0.1.0
 */
import type { Window } from "@ctxlog/core"

/** What the status line shows after a turn. @since 0.1.0 */
export interface Status {
  readonly tokens: Window.Tokens
  readonly budget: number
  readonly events: number
  /** The compaction tier that ran this turn (`none`, `soft`, `hard`, `proactive`, …). */
  readonly tier: string
  /** The highest seam level in the window (0 when none). */
  readonly seamLevel: number
}

/** The agent's view of the terminal. @since 0.1.0 */
export interface Ui {
  readonly color: boolean
  /** The terminal's width in columns; `undefined` off a terminal (nothing is wrapped there). */
  readonly columns: number | undefined
  /**
   * A line of words (uncoloured) broken between words to fit the terminal, later lines indented by
   * `indent`; off a terminal, the text as it is (one line, for grep and logs).
   */
  readonly fit: (text: string, indent?: string) => string
  /** Write streamed text as it arrives (no newline added). */
  readonly stream: (text: string) => void
  readonly line: (text?: string) => void
  readonly dim: (text: string) => string
  readonly bold: (text: string) => string
  readonly accent: (text: string) => string
  readonly warn: (text: string) => string
  readonly ok: (text: string) => string
  /** Show a spinner until the returned function is called (on a TTY; elsewhere nothing). */
  readonly spin: (label: string) => () => void
  readonly status: (status: Status) => void
}

/** Options of the terminal. @since 0.1.0 */
export interface Options {
  readonly out?: NodeJS.WriteStream
  readonly env?: NodeJS.ProcessEnv
  /** Print nothing (tests that only look at the log). */
  readonly quiet?: boolean
}

const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** `1234` as `1.2k`. @since 0.1.0 */
export const kilo = (n: number): string => (Math.abs(n) >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n))

/** A bar of `width` cells for `used` out of `total`; `!` marks the overflow past the total. @since 0.1.0 */
export const bar = (used: number, total: number, width = 12): string => {
  const share = total <= 0 ? 1 : used / total
  const full = Math.min(width, Math.round(share * width))
  return `${"█".repeat(full)}${"░".repeat(width - full)}${share > 1 ? "!" : ""}`
}

/**
 * Long text shown folded: the first `head` lines, how many lines are left out, and the last line. Text
 * of at most `head + 2` lines is shown whole. The log keeps the text as it was; this is only the echo.
 * @since 0.2.0
 */
export const fold = (text: string, head = 3): string => {
  const lines = text.split("\n")
  if (lines.length <= head + 2) return text
  const hidden = lines.length - head - 1
  return [
    ...lines.slice(0, head),
    `  … ${hidden} more lines (${text.length} characters in all) …`,
    lines.at(-1) ?? ""
  ].join("\n")
}

/**
 * Break `text` between words so no line is wider than `width` (continuation lines start with
 * `indent`); a word wider than the line stays whole on a line of its own. Breaks at ` │ ` and ` · `
 * separators first. Width counts code points.
 * @since 0.3.0
 */
export const wrapWords = (text: string, width: number, indent = "  "): string => {
  const length = (s: string) => [...s].length
  const lines: Array<string> = []
  for (const source of text.split("\n")) {
    if (length(source) <= width) {
      lines.push(source)
      continue
    }
    // Pieces: a separator stays at the start of the piece after it.
    const pieces = source.split(/(?= [│·] )/)
    const words =
      pieces.length > 1 && pieces.every((piece) => length(piece) + indent.length <= width)
        ? pieces
        : source.split(/(?= )/)
    let line = ""
    for (const word of words) {
      if (line.length > 0 && length(line) + length(word) > width) {
        lines.push(line.trimEnd())
        line = `${indent}${word.trimStart()}`
      } else line += word
    }
    if (line.length > 0) lines.push(line.trimEnd())
  }
  return lines.join("\n")
}

/**
 * Rows as a table of padded columns (two spaces apart, the first row a header). When that is wider
 * than `width` and column `key` is given, the table is stacked: each row's key cell on a line of its
 * own, whole, and its other cells on the next line, indented and aligned, so an id is never cut.
 * @since 0.3.0
 */
export const table = (
  rows: ReadonlyArray<ReadonlyArray<string>>,
  width = Number.POSITIVE_INFINITY,
  key?: number
): string => {
  const length = (s: string) => [...s].length
  const line = (cells: ReadonlyArray<string>, widths: ReadonlyArray<number>) =>
    cells
      .map((cell, column) => cell + " ".repeat(Math.max(0, (widths[column] ?? 0) - length(cell))))
      .join("  ")
      .trimEnd()
  const widthsOf = (all: ReadonlyArray<ReadonlyArray<string>>) =>
    all[0]?.map((_, column) => Math.max(...all.map((row) => length(row[column] ?? "")))) ?? []
  const flat = rows.map((row) => line(row, widthsOf(rows)))
  if (key === undefined || flat.every((row) => length(row) <= width)) return flat.join("\n")
  const rest = rows.map((row) => row.filter((_, column) => column !== key))
  const widths = widthsOf(rest)
  return rows.flatMap((row, index) => [row[key] ?? "", `    ${line(rest[index] ?? [], widths)}`]).join("\n")
}

/**
 * A table whose last column is prose: when a row is wider than `width`, its last cell is broken
 * between words onto continuation rows (the other cells empty there), so nothing wraps mid-word.
 * @since 0.3.0
 */
export const tableWrappingLast = (rows: ReadonlyArray<ReadonlyArray<string>>, width?: number): string => {
  const flat = table(rows)
  if (width === undefined || flat.split("\n").every((line) => [...line].length <= width)) return flat
  const last = (rows[0]?.length ?? 1) - 1
  // Where the last column starts: the widest cell of each other column, two spaces after each.
  const lead = Array.from({ length: last }, (_, column) =>
    Math.max(...rows.map((row) => [...(row[column] ?? "")].length))
  ).reduce((sum, width) => sum + width + 2, 0)
  const room = Math.max(20, width - lead)
  return table(
    rows.flatMap((row) => {
      const lines = wrapWords(row[last] ?? "", room, "").split("\n")
      return lines.map((text, index) => [
        ...(index === 0 ? row.slice(0, last) : row.slice(0, last).map(() => "")),
        text
      ])
    })
  )
}

/** The status line's text (uncoloured). @since 0.1.0 */
export const statusText = (status: Status): string => {
  const t = status.tokens
  const parts = [
    `sys ${kilo(t.system)}`,
    `kn ${kilo(t.knowledge)}`,
    `task ${kilo(t.taskState + t.signals)}`,
    `hist ${kilo(t.history)}`
  ].join(" ")
  return `${parts} ${bar(t.total, status.budget)} ${kilo(t.total)}/${kilo(status.budget)} │ +${status.events} events │ compaction ${status.tier} │ seam ${status.seamLevel === 0 ? "-" : `L${status.seamLevel}`}`
}

/** The terminal over stdout. @since 0.1.0 */
export const make = (options: Options = {}): Ui => {
  const out = options.out ?? process.stdout
  const env = options.env ?? process.env
  const tty = out.isTTY === true
  const color = tty && (env.NO_COLOR === undefined || env.NO_COLOR === "")
  const paint = (code: string) => (text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text)
  const write = (text: string) => {
    if (options.quiet !== true) out.write(text)
  }
  const dim = paint("2")
  const columns = tty && typeof out.columns === "number" && out.columns > 0 ? out.columns : undefined
  const wrapToTerminal = (text: string, indent = "  ") =>
    columns === undefined ? text : wrapWords(text, columns, indent)
  return {
    color,
    columns,
    fit: wrapToTerminal,
    stream: write,
    line: (text = "") => write(`${text}\n`),
    dim,
    bold: paint("1"),
    accent: paint("36"),
    warn: paint("33"),
    ok: paint("32"),
    spin: (label) => {
      // Off a terminal a spinner is only noise in the output (one line per model call): nothing shows.
      if (!tty || options.quiet === true) return () => {}
      let frame = 0
      const draw = () => write(`\r${paint("36")(frames[frame++ % frames.length] ?? "")} ${dim(label)}\x1b[K`)
      draw()
      const timer = setInterval(draw, 80)
      return () => {
        clearInterval(timer)
        write("\r\x1b[K")
      }
    },
    status: (status) => write(`${dim(wrapToTerminal(statusText(status)))}\n`)
  }
}
