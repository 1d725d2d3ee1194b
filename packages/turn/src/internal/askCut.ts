/**
 * The last step of the turn's fit (issue 39, ADR 0124): when every other stage ran and the user's latest
 * ask alone, with the system prompt, the tools and the output reserve, still does not fit the context
 * window, its longest text part keeps its head and tail verbatim, with a marker in between saying how
 * much was cut and where the whole text is: the stream's file store (read back with the read tool) when
 * one is there, else the log (the event that appended the message holds it whole). Recorded as one
 * `UserAskCut` event (its receipt names the message and the tokens before and after), so the render
 * rebuilds from the log byte for byte. The message keeps its id, so it is still the user's latest ask.
 * The same cut is the unseen tool round's last resort (`UnseenCut`, ADR 0147).
 */
import { type EventLog, type Message, Receipt, TokenCounter, Window, WindowEvent } from "@ctxlog/core"
import { FileStore } from "@ctxlog/memory"
import type { CtxBuilder } from "@ctxlog/providers"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/** Where the whole text is, as the marker says it. */
export type Whereabouts =
  | {
      readonly _tag: "stored"
      readonly sha256: string
      readonly bytes: number
      readonly lines: number
      readonly readTool: string
    }
  | { readonly _tag: "log" }

/** The marker standing for the cut middle of the ask. */
export const marker = (omitted: number, where: Whereabouts): string =>
  where._tag === "stored"
    ? `\n[… ${omitted} characters of this message cut to fit the context window; the whole message is stored output id=${FileStore.shortId(where.sha256)} (${where.bytes} bytes, ${where.lines} lines): ${where.readTool} {"id":"${FileStore.shortId(where.sha256)}"} returns it …]\n`
    : `\n[… ${omitted} characters of this message cut to fit the context window; the whole message is kept in the session's log …]\n`

/** `text` cut to `keep` characters of head (60%) and tail, the marker between them. */
export const cutText = (text: string, keep: number, where: Whereabouts): string => {
  const kept = Math.max(0, Math.min(text.length, Math.floor(keep)))
  const head = Math.floor(kept * 0.6)
  const tail = kept - head
  return `${text.slice(0, head)}${marker(text.length - kept, where)}${tail === 0 ? "" : text.slice(text.length - tail)}`
}

/** Fewer characters than this of head and tail together: the cut gives up (the fit fails as before). */
export const minimumKeep = 200

/** How far a build is over the window: prompt, reminder and output reserve past the context window. */
const overBy = (stats: CtxBuilder.BuildStats): number =>
  stats.total + stats.reminderTokens + stats.outputReserve - stats.contextWindow

/** A cut's draft: the ask's (`UserAskCut`) or the unseen round's (`UnseenCut`). */
export type CutDraft = Omit<WindowEvent.EventOf<"UserAskCut">, "id"> | Omit<WindowEvent.EventOf<"UnseenCut">, "id">

/** The cut event of `tag` for one part of `messageId`, with its receipt's reason. */
const draftOf =
  (tag: CutDraft["_tag"], messageId: string, partIndex: number, reason: string) =>
  (cut: string, tokens: number, where: Whereabouts): CutDraft => ({
    _tag: tag,
    messageId,
    parts: [{ partIndex, text: cut }],
    tokens,
    stored: where._tag === "stored" ? where.sha256 : null,
    receipt: Receipt.draft({ reason })
  })

/**
 * Cut part `partIndex` of `message` (its text `text`) until `window` fits: a first guess from the
 * overshoot, then corrected by what each probe build measures (at most 8). `undefined` when even the
 * shortest cut does not fit.
 */
const cutToFit = <E, R>(
  window: Window.Window,
  message: Message.Message,
  partIndex: number,
  text: string,
  stats: CtxBuilder.BuildStats,
  build: (window: Window.Window) => Either.Either<CtxBuilder.Built<unknown>, unknown>,
  store: (text: string) => Effect.Effect<Whereabouts, E, R>,
  make: (cut: string, tokens: number, where: Whereabouts) => CutDraft
): Effect.Effect<CutDraft | undefined, E, R | TokenCounter.TokenCounter> =>
  Effect.gen(function* () {
    const counter = yield* TokenCounter.TokenCounter
    const partTokens = Math.max(1, counter.count(text))
    let over = overBy(stats)
    let keep = Math.floor((text.length * Math.max(0, partTokens - over - 64)) / partTokens)
    let where: Whereabouts | undefined
    for (let attempt = 0; attempt < 8 && keep >= minimumKeep; attempt++) {
      where = where ?? (yield* store(text))
      const cut = cutText(text, keep, where)
      const parts = message.parts.map((part, index) =>
        index !== partIndex
          ? part
          : part.type === "text"
            ? { ...part, text: cut }
            : part.type === "tool_result"
              ? { ...part, content: cut }
              : part
      )
      const draft = make(cut, counter.countMessage({ ...message, parts }), where)
      // Evolved locally with a probe id to measure the cut; only the draft that fits is written.
      const probe = build(Window.evolve(window, WindowEvent.stamp(draft, "probe")))
      if (Either.isLeft(probe)) return undefined
      over = overBy(probe.right.stats)
      if (over <= 0) return draft
      // Still over: take the overshoot (and a little more) off what is kept, by the text's characters a token.
      keep = Math.floor(keep - ((over + 16) * text.length) / partTokens)
    }
    return undefined
  })

/**
 * The `UserAskCut` that makes `window` fit, or `undefined` when there is no ask, no text to cut, or even
 * the shortest cut does not fit. `build` builds a window (as the render does); `store` puts the whole text
 * somewhere and says where (called once, only when a cut is made).
 */
export const decide = <E, R>(
  window: Window.Window,
  stats: CtxBuilder.BuildStats,
  build: (window: Window.Window) => Either.Either<CtxBuilder.Built<unknown>, unknown>,
  store: (text: string) => Effect.Effect<Whereabouts, E, R>
): Effect.Effect<CutDraft | undefined, E, R | TokenCounter.TokenCounter> =>
  Effect.suspend(() => {
    const id = Window.latestUserAsk(window)
    const ask = id === undefined ? undefined : Window.findMessage(window, id)
    if (ask === undefined) return Effect.succeed(undefined)
    let partIndex = -1
    let text = ""
    for (const [index, part] of ask.parts.entries()) {
      if (part.type === "text" && part.text.length > text.length) {
        partIndex = index
        text = part.text
      }
    }
    if (partIndex < 0 || text.length <= minimumKeep) return Effect.succeed(undefined)
    return cutToFit(
      window,
      ask,
      partIndex,
      text,
      stats,
      build,
      store,
      draftOf("UserAskCut", ask.id, partIndex, "the user's ask alone does not fit the context window")
    )
  })

/**
 * The unseen tool round's last resort (ADR 0147): the longest text among the messages no removal path may
 * drop (`Window.unseenToolPairs`: the results the model has not seen, the messages making their calls,
 * the calls still waiting) — a tool result's content (a plain one, without rich parts) or an assistant
 * message's text — cut to its head and tail with the whole text stored, as one `UnseenCut`. `undefined`
 * when there is nothing longer than the minimum to cut or even the shortest cut does not fit.
 */
export const decideUnseen = <E, R>(
  window: Window.Window,
  stats: CtxBuilder.BuildStats,
  build: (window: Window.Window) => Either.Either<CtxBuilder.Built<unknown>, unknown>,
  store: (text: string) => Effect.Effect<Whereabouts, E, R>
): Effect.Effect<CutDraft | undefined, E, R | TokenCounter.TokenCounter> =>
  Effect.suspend(() => {
    let message: Message.Message | undefined
    let partIndex = -1
    let text = ""
    for (const id of Window.unseenToolPairs(window)) {
      const candidate = Window.findMessage(window, id)
      if (candidate === undefined) continue
      for (const [index, part] of candidate.parts.entries()) {
        const own =
          part.type === "text" && candidate.role === "assistant"
            ? part.text
            : part.type === "tool_result" && part.parts === undefined
              ? part.content
              : ""
        if (own.length > text.length) {
          message = candidate
          partIndex = index
          text = own
        }
      }
    }
    if (message === undefined || text.length <= minimumKeep) return Effect.succeed(undefined)
    const chosen = message
    return cutToFit(
      window,
      chosen,
      partIndex,
      text,
      stats,
      build,
      store,
      draftOf("UnseenCut", chosen.id, partIndex, "the unseen tool round alone does not fit the context window")
    )
  })

/** The whole text in the stream's file store when one is provided, else in the log (nothing to write). */
export const storeWhole =
  (stream: string, readTool: string) =>
  (
    text: string
  ): Effect.Effect<Whereabouts, FileStore.InvalidFileRequest | EventLog.OwnerMismatch | EventLog.StoreError> =>
    Effect.flatMap(Effect.serviceOption(FileStore.FileStore), (files) =>
      files._tag === "None"
        ? Effect.succeed<Whereabouts>({ _tag: "log" })
        : Effect.map(
            files.value.put(stream, text),
            (info): Whereabouts => ({
              _tag: "stored",
              sha256: info.sha256,
              bytes: info.bytes,
              lines: info.lines,
              readTool
            })
          )
    )
