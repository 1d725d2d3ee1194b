/**
 * One model call, streamed to the terminal: a spinner until the first text arrives, then the text as
 * it comes. Each failure is printed once: a retried one as a notice (and, when part of an answer was
 * already on screen, a marker that the answer restarts), the last one not at all here but returned
 * as {@link ModelCallFailed}, whose message says it gives up and what to do; the command line prints
 * it. A tool call cut off by the output limit is kept (with the text before it) and marked, so the
 * tools answer it with an error result instead of the run ending.
 *
 * @since 0.2.0
 */
import { LanguageModel, Message } from "@ctxlog/core"
import { RetryPolicy } from "@ctxlog/providers"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Provider from "./Provider.js"
import type { Ui } from "./Ui.js"

/**
 * The input key of a tool call the output limit cut off before its arguments were complete. The
 * tools answer such a call with an error result ({@link cutMessage}) and run nothing.
 * @since 0.2.0
 */
export const cutInputKey = "ctxlog_cut_by_output_limit"

/** Why the tools refuse a cut call (the model reads it in the error result). @since 0.2.0 */
export const cutMessage =
  "the call was cut off at the output limit (max_tokens) before its arguments were complete, so it did not run; send it again with smaller arguments (write a large file in several parts)"

/** Whether a tool input is the marker of a cut call. @since 0.2.0 */
export const isCut = (input: Message.JsonValue): boolean =>
  typeof input === "object" && input !== null && !Array.isArray(input) && cutInputKey in input

/** The model call failed for good: the message says why, that the agent gives up, and what to do. @since 0.2.0 */
export class ModelCallFailed extends Schema.TaggedError<ModelCallFailed>()("ModelCallFailed", {
  provider: Schema.String,
  model: Schema.String,
  attempts: Schema.Number,
  /** The longest `retry-after` the agent's HTTP client waits for (ms). */
  maxWaitMs: Schema.Number,
  error: LanguageModel.ProviderError
}) {
  override get message(): string {
    const error = this.error
    const what = `${this.provider}/${this.model}: ${error.reason}${error.status === undefined ? "" : ` (HTTP ${error.status})`}: ${error.detail.replace(/[.\s]+$/, "")}`
    if (error.retryAfterMs !== undefined && error.retryAfterMs > this.maxWaitMs) {
      // The client's own note on the wait (it did not retry) is said once, in the agent's words, below.
      const said = what.replace(/; the API asked to wait [\s\S]*$/, "")
      return `${said}. The API asked to wait ${seconds(error.retryAfterMs)} before the next request, longer than the ${seconds(this.maxWaitMs)} the agent waits, so it gives up; after that, resume the session with the command below.`
    }
    const tries = this.attempts === 1 ? "" : ` after ${this.attempts} attempts`
    return `${what}. Giving up${tries}; ${adviceFor(error)}.`
  }
}

const seconds = (ms: number): string => {
  const s = Math.ceil(ms / 1000)
  return s >= 120 && s % 60 === 0 ? `${s / 60} min` : `${s} s`
}

const adviceFor = (error: LanguageModel.ProviderError): string => {
  switch (error.reason) {
    case "auth":
      return "check the API key"
    case "bad_request":
      return "the provider refused the request; check --model, --base-url and --max-output-tokens"
    case "rate_limited":
    case "overloaded":
      return "the log is consistent: wait a little, then resume the session with the command below"
    default:
      return "the log is consistent: resume the session with the command below"
  }
}

/**
 * A stream that ended cleanly before its final event (no `message_stop`, `finish_reason` or
 * `response.completed`): as broken as a reset, and retried like one.
 * @since 0.2.0
 */
export const isEarlyEnd = (error: LanguageModel.ProviderError): boolean =>
  error.reason === "malformed_response" &&
  (error.detail.startsWith("stream ended before") || error.detail === earlyEndDetail)

const earlyEndDetail = "the stream ended without a final response"

/** A call cut by the output limit inside a tool call's arguments, as the current clients report it. */
const isCutToolInput = (error: LanguageModel.ProviderError): boolean =>
  error.reason === "malformed_response" && /^tool call \S* ?input is not JSON/.test(error.detail)

/** What one attempt saw before it ended. @since 0.2.0 */
export interface Seen {
  text: string
  readonly calls: Map<string, { readonly name: string; json: string }>
  chunks: number
  onScreen: boolean
}

const parses = (json: string): boolean => {
  if (json.trim().length === 0) return true
  try {
    JSON.parse(json)
    return true
  } catch {
    return false
  }
}

const cutInput = (json: string): Message.JsonValue => ({ [cutInputKey]: json.slice(0, 200) })

/**
 * The answer of a call the output limit cut inside a tool call: the text and the complete calls as
 * they streamed, the cut calls marked. Usage is unknown (the final event did not decode): zero.
 */
const cutResponse = (provider: Provider.Provider, seen: Seen): LanguageModel.ModelResponse => ({
  provider: provider.name,
  model: provider.model,
  parts: [
    ...(seen.text.length > 0 ? [Message.text(seen.text)] : []),
    ...[...seen.calls].map(([id, call]) =>
      Message.toolCall(id, call.name, parses(call.json) ? parseJson(call.json) : cutInput(call.json))
    )
  ],
  stopReason: "max_tokens",
  usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
})

const parseJson = (json: string): Message.JsonValue => {
  if (json.trim().length === 0) return {}
  const decoded = Schema.decodeUnknownEither(Message.JsonValue)(JSON.parse(json))
  return decoded._tag === "Right" ? decoded.right : cutInput(json)
}

/** A response stopped by the output limit whose tool calls still arrived whole keeps them; a cut one is marked. */
const markCutCalls = (response: LanguageModel.ModelResponse, seen: Seen): LanguageModel.ModelResponse => {
  if (response.stopReason !== "max_tokens") return response
  // The provider names the calls it cut (`cutToolCalls`); a call whose streamed input does not parse is cut too.
  const cut = new Set([
    ...(response.cutToolCalls ?? []).map((call) => call.id),
    ...[...seen.calls].flatMap(([id, call]) => (parses(call.json) ? [] : [id]))
  ])
  if (cut.size === 0) return response
  return {
    ...response,
    parts: response.parts.map((part) =>
      part.type === "tool_call" && cut.has(part.id) ? Message.toolCall(part.id, part.name, cutInput("")) : part
    )
  }
}

/** One attempt: stream the chunks to the terminal and collect the response. */
const attempt = (
  ui: Ui,
  provider: Provider.Provider,
  send: Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError>,
  seen: Seen
): Effect.Effect<LanguageModel.ModelResponse, LanguageModel.ProviderError> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const stop = ui.spin(`${provider.name}/${provider.model} thinking…`)
      let stopped = false
      return () => {
        if (!stopped) {
          stopped = true
          stop()
        }
      }
    }),
    (stopSpinner) =>
      Stream.runFold(send, undefined as LanguageModel.ModelResponse | undefined, (done, chunk) => {
        seen.chunks++
        if (chunk._tag === "TextDelta") {
          stopSpinner()
          ui.stream(chunk.text)
          seen.text += chunk.text
          seen.onScreen = true
        } else if (chunk._tag === "ToolCallDelta") {
          const call = seen.calls.get(chunk.id)
          if (call === undefined) seen.calls.set(chunk.id, { name: chunk.name, json: chunk.inputJson })
          else call.json += chunk.inputJson
        }
        return chunk._tag === "Done" ? chunk.response : done
      }).pipe(
        Effect.flatMap((response) =>
          response === undefined
            ? Effect.fail(
                new LanguageModel.ProviderError({
                  provider: provider.name,
                  reason: "malformed_response",
                  detail: earlyEndDetail
                })
              )
            : Effect.succeed(markCutCalls(response, seen))
        ),
        Effect.catchIf(
          (error) => isCutToolInput(error) && [...seen.calls.values()].some((call) => !parses(call.json)),
          () => Effect.succeed(cutResponse(provider, seen))
        ),
        // The answer's last line ends here, whether the call succeeded or broke.
        Effect.ensuring(Effect.sync(() => (seen.onScreen ? ui.line() : undefined)))
      ),
    (stopSpinner) => Effect.sync(stopSpinner)
  )

/** Attempts the agent makes of one call (the first and its retries), see {@link retryBrokenStream}. @since 0.2.0 */
export const attemptsOfBrokenStream = 3

/** The failure the agent gives up on, after `attempts` attempts. */
const giveUp = (provider: Provider.Provider, attempts: number, error: LanguageModel.ProviderError) =>
  new ModelCallFailed({
    provider: provider.name,
    model: provider.model,
    attempts,
    maxWaitMs: provider.retry.maxDelayMs,
    error
  })

const freshSeen = (): Seen => ({ text: "", calls: new Map(), chunks: 0, onScreen: false })

/**
 * The agent's own retry, for what the HTTP client does not retry: a stream that broke (a reset, a
 * server error event, a clean end before the final event) after it opened. A failure before the stream
 * produced anything was already retried by the client's policy (`RetryPolicy`, which honours
 * `retry-after`) and is not retried twice.
 *
 * Delete this function when the provider layer retries broken streams itself: `callModel` then runs
 * `attempt` once (`Effect.mapError((error) => giveUp(provider, 1, error))`); nothing else depends on it.
 * @since 0.2.0
 */
export const retryBrokenStream = (
  ui: Ui,
  provider: Provider.Provider,
  once: (seen: Seen) => Effect.Effect<LanguageModel.ModelResponse, LanguageModel.ProviderError>
): Effect.Effect<LanguageModel.ModelResponse, ModelCallFailed> =>
  Effect.suspend(() => {
    // Per run of the returned effect: the attempts made and what the current one saw.
    let attempts = 0
    let seen = freshSeen()
    const one = Effect.suspend(() => {
      attempts++
      seen = freshSeen()
      return once(seen)
    })
    const brokeAfterOpening = (error: LanguageModel.ProviderError) =>
      (seen.chunks > 0 && RetryPolicy.isRetryable(error)) || isEarlyEnd(error)
    return one.pipe(
      Effect.tapError((error) =>
        Effect.sync(() => {
          // The last failure is not announced here: the caller prints it once, as giving up.
          if (!brokeAfterOpening(error) || attempts >= attemptsOfBrokenStream) return
          const restart = seen.onScreen ? "; the answer restarts below" : ""
          ui.line(
            ui.warn(
              `  ↻ ${error.message}: the stream broke, retrying (attempt ${attempts + 1} of ${attemptsOfBrokenStream})${restart}`
            )
          )
        })
      ),
      Effect.retry({
        schedule: Schedule.exponential("200 millis"),
        times: attemptsOfBrokenStream - 1,
        while: brokeAfterOpening
      }),
      Effect.mapError((error) => giveUp(provider, attempts, error))
    )
  })

/**
 * Stream one model call to the terminal and return the response; a stream that broke after it opened
 * is retried ({@link retryBrokenStream}); the last failure is a {@link ModelCallFailed} that says it
 * gives up (printed once, by the caller).
 * @since 0.2.0
 */
export const callModel = (
  ui: Ui,
  provider: Provider.Provider,
  send: Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError>,
  partial?: Partial
): Effect.Effect<LanguageModel.ModelResponse, ModelCallFailed> =>
  retryBrokenStream(ui, provider, (seen) => {
    if (partial !== undefined) partial.seen = seen
    return attempt(ui, provider, send, seen)
  })

/**
 * What the current attempt of a call has streamed so far: the answer an interruption (Ctrl-C) keeps
 * (see `Agent.turn`).
 * @since 0.3.0
 */
export interface Partial {
  seen: Seen | undefined
}
