/**
 * `@ai-sdk/anthropic`'s prompt-conversion cases, run through ctxlog (issue 35). Source: vercel/ai
 * `packages/anthropic/src/convert-to-anthropic-messages-prompt.test.ts` at commit
 * b8e4215ea7ddf4cca6551bdadfada8f1bbadd8cf (branch `release-v6.0`: ai 6.0.264, @ai-sdk/anthropic
 * 3.0.111 — the newest ai 6 snapshot stored; the repo installs ai 6.0.326), Apache-2.0, Copyright
 * Vercel, Inc. Each case's prompt (a `LanguageModelV3Prompt`) and the Anthropic request it expects are
 * copied from the case (test names kept, every case of the file, in order); the case then runs the
 * prompt through ctxlog — `fromLanguageModelPrompt` of `@ctxlog/providers/ai-sdk` (provider-executed
 * tools ran by `anthropic`) → ctxlog messages → `toAnthropic` (with the case's `sendReasoning`) — and
 * compares what it gives with what the case expects: the same, or refused with an `AdapterError`
 * naming the part (where `@ai-sdk/anthropic` drops it with a warning, ctxlog refuses), or a stated rule
 * by which ctxlog differs (the rule, as code, maps the case's expectation to ctxlog's output).
 *
 * Compared: the request's `system` (absent when empty) and `messages` as JSON (`undefined` fields
 * left out). Not compared: `betas` (request headers, not messages; `toAnthropic` returns messages) and
 * warnings (ctxlog refuses instead of warning). Where the case asserts part of the result (one block,
 * `toMatchObject`), the same part is compared the same way.
 *
 * The AI SDK side: some cases need `fromLanguageModelPrompt` to keep provider options it refused
 * before issue 35 (`anthropic.citations`, `anthropic.caller`, ...). Such a case names what it needs; a
 * probe asks the adapter in this tree whether it keeps that, and the case asserts its verdict when it
 * does, and what happens instead (refused on the AI SDK side) when it does not. The tally counts what
 * happened. The cache cases need the Anthropic cache hints on the converted prompt: a provider
 * prompt's hints stay where they sit (`FromOptions.cacheHints`, default `"keep"` for
 * `fromLanguageModelPrompt`), so `toAnthropic` places them, refusing a fifth breakpoint by name.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { fromLanguageModelPrompt, type LanguageModelPrompt } from "../src/adapters/aiSdk.js"
import { toAnthropic } from "../src/adapters/anthropic.js"
import { assertCoverageRow, type Outcome } from "./support/coverage.js"

type Json = unknown
type Out = { readonly system?: Json; readonly messages: ReadonlyArray<Record<string, Json>> }

/** A rule by which ctxlog differs: ctxlog's output as a function of the case's expectation. */
interface Differs {
  readonly rule: string
  readonly expected: (upstream: Json) => Json
}
type Verdict = "same" | { readonly refused: string } | Differs

interface Case {
  readonly name: string
  readonly prompt: ReadonlyArray<unknown>
  readonly sendReasoning?: boolean
  /** What the case expects (of `view`). */
  readonly expected: Json
  /** The part of the result the case asserts (default: `{ system, messages }`). */
  readonly view?: (out: Out) => Json
  /** The case asserts with `toMatchObject`. */
  readonly subset?: boolean
  readonly verdict: Verdict
  /** What the case needs of the AI SDK adapter, and what happens while it does not keep it. */
  readonly aiSdk?: { readonly needs: Need; readonly otherwise: Verdict }
}
type Need = "options"

const plain = (value: unknown): Json => JSON.parse(JSON.stringify(value, (_, v) => (v instanceof Set ? [...v] : v)))

const run = (scenario: Case) =>
  Either.flatMap(fromLanguageModelPrompt(scenario.prompt as LanguageModelPrompt, { provider: "anthropic" }), (inputs) =>
    toAnthropic(inputs, { sendReasoning: scenario.sendReasoning ?? true })
  )

/** Whether the AI SDK adapter in this tree keeps what a case needs (asked of the adapter itself). */
const keeps = (_needs: Need): boolean => {
  const anthropic = { citations: [{ type: "char_location" }] }
  const probe = fromLanguageModelPrompt([
    { role: "assistant", content: [{ type: "text", text: "x", providerOptions: { anthropic } } as { type: string }] }
  ])
  if (Either.isLeft(probe)) return false
  const kept = probe.right[0]?.parts[0]?.providerOptions?.anthropic
  return typeof kept === "object" && kept !== null && Object.keys(anthropic).every((key) => key in kept)
}
const kept: { readonly [N in Need]: boolean } = { options: keeps("options") }

const active = (scenario: Case): Verdict =>
  scenario.aiSdk === undefined || kept[scenario.aiSdk.needs] ? scenario.verdict : scenario.aiSdk.otherwise

const outcomeOf = (verdict: Verdict): Outcome =>
  verdict === "same" ? "same" : "refused" in verdict ? "refused" : "differs"

/** `expected` is contained in `actual` (toMatchObject: objects by their listed keys, arrays whole). */
const contains = (actual: Json, expected: Json): boolean => {
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, i) => contains(actual[i], item))
    )
  }
  if (typeof expected === "object" && expected !== null) {
    return (
      typeof actual === "object" &&
      actual !== null &&
      Object.entries(expected).every(([key, value]) => contains((actual as Record<string, Json>)[key], value))
    )
  }
  return actual === expected
}

// --- prompts and requests, as the cases write them ---------------------------------------------------

const text = (value: string, extra: object = {}) => ({ type: "text", text: value, ...extra })
const user = (...content: ReadonlyArray<object>) => ({ role: "user", content })
const assistant = (...content: ReadonlyArray<object>) => ({ role: "assistant", content })
const tool = (...content: ReadonlyArray<object>) => ({ role: "tool", content })
const cache = { anthropic: { cacheControl: { type: "ephemeral" } } }
const ephemeral = { type: "ephemeral" }
const jsonResult = (toolCallId: string, toolName: string, value: Json, extra: object = {}) => ({
  type: "tool-result",
  toolCallId,
  toolName,
  output: { type: "json", value },
  ...extra
})
const serverCall = (toolCallId: string, toolName: string, input: Json, extra: object = {}) => ({
  type: "tool-call",
  toolCallId,
  toolName,
  input,
  providerExecuted: true,
  ...extra
})
const toolResultBlock = (id: string, content: Json, extra: object = {}) => ({
  type: "tool_result",
  tool_use_id: id,
  content,
  ...extra
})
const serverUse = (id: string, name: string, input: Json) => ({ type: "server_tool_use", id, name, input })
const strawberry = 'I need to count the number of "r"s in the word "strawberry".'
const strawberryAnswer = text('The word "strawberry" has 2 "r"s.')
const signed = (value: string, signature: string) => ({
  type: "reasoning",
  text: value,
  providerOptions: { anthropic: { signature } }
})
const webSearchResult = {
  url: "https://patch.com/california/san-francisco/calendar",
  title: "San Francisco Calendar",
  pageAge: null,
  encryptedContent: "encrypted-content",
  type: "web_search_result"
}
const webSearchBlock = {
  url: "https://patch.com/california/san-francisco/calendar",
  title: "San Francisco Calendar",
  page_age: null,
  encrypted_content: "encrypted-content",
  type: "web_search_result"
}
const fibonacciPrompt = [
  assistant(
    serverCall("srvtoolu_01Hq9rR6fZwwDGHkTYRafn7k", "code_execution", {
      type: "text_editor_code_execution",
      command: "create",
      path: "/tmp/fibonacci.py",
      file_text: "def.."
    }),
    jsonResult("srvtoolu_01Hq9rR6fZwwDGHkTYRafn7k", "code_execution", {
      type: "text_editor_code_execution_create_result",
      is_file_update: false
    }),
    serverCall("srvtoolu_0193G3ttnkiTfZASwHQSKc2V", "code_execution", {
      type: "bash_code_execution",
      command: "python /tmp/fibonacci.py"
    }),
    jsonResult("srvtoolu_0193G3ttnkiTfZASwHQSKc2V", "code_execution", {
      type: "bash_code_execution_result",
      content: [],
      stdout: "The 10th Fibonacci number is: 34\n",
      stderr: "",
      return_code: 0
    })
  )
]
const fibonacciExpected = {
  messages: [
    {
      role: "assistant",
      content: [
        serverUse("srvtoolu_01Hq9rR6fZwwDGHkTYRafn7k", "text_editor_code_execution", {
          command: "create",
          file_text: "def..",
          path: "/tmp/fibonacci.py"
        }),
        {
          type: "text_editor_code_execution_tool_result",
          tool_use_id: "srvtoolu_01Hq9rR6fZwwDGHkTYRafn7k",
          content: { is_file_update: false, type: "text_editor_code_execution_create_result" }
        },
        serverUse("srvtoolu_0193G3ttnkiTfZASwHQSKc2V", "bash_code_execution", { command: "python /tmp/fibonacci.py" }),
        {
          type: "bash_code_execution_tool_result",
          tool_use_id: "srvtoolu_0193G3ttnkiTfZASwHQSKc2V",
          content: {
            content: [],
            return_code: 0,
            stderr: "",
            stdout: "The 10th Fibonacci number is: 34\n",
            type: "bash_code_execution_result"
          }
        }
      ]
    }
  ]
}
const advisorPrompt = (id: string, value: Json) => [
  assistant(serverCall(id, "advisor", {}), jsonResult(id, "advisor", value))
]
const secondBlock = (out: Out) => (out.messages[0]?.content as ReadonlyArray<Json> | undefined)?.[1]

// --- rules by which ctxlog differs ------------------------------------------------------------------

const hoistRule: Differs = {
  rule:
    "system messages go to the request's `system`, wherever they sit in the conversation (ctxlog's " +
    "Anthropic messages have no inline system turn, and no `mid-conversation-system` beta)",
  expected: () => ({
    system: [text("initial"), text("switch tone")],
    messages: [user(text("hi")), assistant(text("hello")), user(text("go"))]
  })
}
const separateRule = (expected: Json): Differs => ({
  rule:
    "consecutive turns of one role stay separate messages (the API joins consecutive turns of one role); " +
    "only the results of a tool round travel together, in one user message",
  expected: () => expected
})

// --- the cases, in the file's order -----------------------------------------------------------------

const cases: ReadonlyArray<Case> = [
  // describe('system messages')
  {
    name: "should convert a single system message into an anthropic system message",
    prompt: [{ role: "system", content: "This is a system message" }],
    expected: { messages: [], system: [text("This is a system message")] },
    verdict: "same"
  },
  {
    name: "should convert multiple system messages into an anthropic system message",
    prompt: [
      { role: "system", content: "This is a system message" },
      { role: "system", content: "This is another system message" }
    ],
    expected: { messages: [], system: [text("This is a system message"), text("This is another system message")] },
    verdict: "same"
  },
  {
    name: "should emit a mid-conversation system message inline and add the beta",
    prompt: [
      { role: "system", content: "initial" },
      user(text("hi")),
      assistant(text("hello")),
      { role: "system", content: "switch tone" },
      user(text("go"))
    ],
    // The case asserts `system` and that `messages` contain the inline system turn; this is the
    // request its converter builds.
    expected: {
      system: [text("initial")],
      messages: [
        user(text("hi")),
        assistant(text("hello")),
        { role: "system", content: [text("switch tone")] },
        user(text("go"))
      ]
    },
    verdict: hoistRule
  },
  ...(
    [
      ["should emit tool change blocks on a mid-conversation system message and add the beta", "tools have changed", 3],
      ["should not emit an empty text block for a system message that only carries tool changes", "", 3],
      ["should warn and drop tool changes on the initial system message", "initial", 0]
    ] as const
  ).map(
    ([name, content, at]): Case => ({
      name,
      prompt: [
        ...(at === 0 ? [] : [{ role: "system", content: "initial" }, user(text("hi")), assistant(text("hello"))]),
        {
          role: "system",
          content,
          providerOptions: {
            anthropic: {
              toolChanges:
                at === 0
                  ? [{ type: "tool_addition", toolName: "get_forecast" }]
                  : content === ""
                    ? [{ type: "tool_removal", toolName: "get_weather" }]
                    : [
                        { type: "tool_addition", toolName: "get_forecast" },
                        { type: "tool_removal", toolName: "get_weather" }
                      ]
            }
          }
        },
        ...(content === "" ? [] : [user(text(at === 0 ? "hi" : "go"))])
      ],
      expected: "tool changes (an inline system turn with tool_addition / tool_removal blocks, or a warning)",
      verdict: { refused: `Anthropic message ${at} providerOptions.anthropic.toolChanges` },
      aiSdk: {
        needs: "options",
        otherwise: {
          refused: `AI SDK message ${at} providerOptions: provider option anthropic.toolChanges is not kept`
        }
      }
    })
  ),
  // describe('user messages')
  {
    name: "should add image parts for UInt8Array images",
    prompt: [user({ type: "file", data: "AAECAw==", mediaType: "image/png" })],
    expected: {
      messages: [user({ type: "image", source: { data: "AAECAw==", media_type: "image/png", type: "base64" } })]
    },
    verdict: "same"
  },
  {
    name: "should add image parts for URL images",
    prompt: [user({ type: "file", data: new URL("https://example.com/image.png"), mediaType: "image/*" })],
    expected: { messages: [user({ type: "image", source: { type: "url", url: "https://example.com/image.png" } })] },
    verdict: "same"
  },
  {
    name: "should treat URL strings in image file data as URLs, not base64)",
    prompt: [user({ type: "file", data: "https://example.com/image.png", mediaType: "image/png" })],
    expected: { messages: [user({ type: "image", source: { type: "url", url: "https://example.com/image.png" } })] },
    verdict: "same"
  },
  {
    name: "should treat URL strings in PDF file data as URLs, not base64)",
    prompt: [user({ type: "file", data: "https://example.com/document.pdf", mediaType: "application/pdf" })],
    expected: {
      messages: [user({ type: "document", source: { type: "url", url: "https://example.com/document.pdf" } })]
    },
    verdict: "same"
  },
  {
    name: "should add PDF file parts for base64 PDFs",
    prompt: [user({ type: "file", data: "base64PDFdata", mediaType: "application/pdf" })],
    expected: {
      messages: [
        user({ type: "document", source: { type: "base64", media_type: "application/pdf", data: "base64PDFdata" } })
      ]
    },
    verdict: "same"
  },
  {
    name: "should add PDF file parts for URL PDFs",
    prompt: [user({ type: "file", data: new URL("https://example.com/document.pdf"), mediaType: "application/pdf" })],
    expected: {
      messages: [user({ type: "document", source: { type: "url", url: "https://example.com/document.pdf" } })]
    },
    verdict: "same"
  },
  {
    name: "should add text file parts for text/plain documents",
    prompt: [
      user({ type: "file", data: btoa("sample text content"), mediaType: "text/plain", filename: "sample.txt" })
    ],
    expected: {
      messages: [
        user({
          type: "document",
          source: { type: "text", media_type: "text/plain", data: "sample text content" },
          title: "sample.txt"
        })
      ]
    },
    verdict: "same"
  },
  {
    name: "should throw error for unsupported file types",
    prompt: [user({ type: "file", data: "base64data", mediaType: "video/mp4" })],
    expected: "throws: media type: video/mp4",
    verdict: { refused: "Anthropic message 0 parts[0]: document media type video/mp4" }
  },
  // describe('tool messages')
  {
    name: "should convert a single tool result into an anthropic user message",
    prompt: [tool(jsonResult("tool-call-1", "tool-1", { test: "This is a tool message" }))],
    expected: { messages: [user(toolResultBlock("tool-call-1", JSON.stringify({ test: "This is a tool message" })))] },
    verdict: "same"
  },
  {
    name: "should convert multiple tool results into an anthropic user message",
    prompt: [
      tool(
        jsonResult("tool-call-1", "tool-1", { test: "This is a tool message" }),
        jsonResult("tool-call-2", "tool-2", { something: "else" })
      )
    ],
    expected: {
      messages: [
        user(
          toolResultBlock("tool-call-1", JSON.stringify({ test: "This is a tool message" })),
          toolResultBlock("tool-call-2", JSON.stringify({ something: "else" }))
        )
      ]
    },
    verdict: "same"
  },
  {
    name: "should combine user and tool messages",
    prompt: [
      tool(jsonResult("tool-call-1", "tool-1", { test: "This is a tool message" })),
      user(text("This is a user message"))
    ],
    expected: {
      messages: [
        user(
          toolResultBlock("tool-call-1", JSON.stringify({ test: "This is a tool message" })),
          text("This is a user message")
        )
      ]
    },
    verdict: separateRule({
      messages: [
        user(toolResultBlock("tool-call-1", JSON.stringify({ test: "This is a tool message" }))),
        user(text("This is a user message"))
      ]
    })
  },
  {
    name: "should handle tool result with content parts",
    prompt: [
      tool({
        type: "tool-result",
        toolName: "image-generator",
        toolCallId: "image-gen-1",
        output: {
          type: "content",
          value: [
            text("Image generated successfully"),
            { type: "image-data", data: "AAECAw==", mediaType: "image/png" }
          ]
        }
      })
    ],
    expected: {
      messages: [
        user(
          toolResultBlock("image-gen-1", [
            text("Image generated successfully"),
            { source: { data: "AAECAw==", media_type: "image/png", type: "base64" }, type: "image" }
          ])
        )
      ]
    },
    verdict: "same"
  },
  {
    name: "should handle tool result with PDF content",
    prompt: [
      tool({
        type: "tool-result",
        toolName: "pdf-generator",
        toolCallId: "pdf-gen-1",
        output: {
          type: "content",
          value: [
            text("PDF generated successfully"),
            { type: "file-data", data: "JVBERi0xLjQKJeLjz9MKNCAwIG9iago=", mediaType: "application/pdf" }
          ]
        }
      })
    ],
    expected: {
      messages: [
        user(
          toolResultBlock("pdf-gen-1", [
            text("PDF generated successfully"),
            {
              source: { data: "JVBERi0xLjQKJeLjz9MKNCAwIG9iago=", media_type: "application/pdf", type: "base64" },
              type: "document"
            }
          ])
        )
      ]
    },
    verdict: "same"
  },
  {
    name: "should handle tool result with custom tool-reference content for custom tool search",
    prompt: [
      tool({
        type: "tool-result",
        toolName: "searchTools",
        toolCallId: "search-1",
        output: {
          type: "content",
          value: [
            { type: "custom", providerOptions: { anthropic: { type: "tool-reference", toolName: "get_weather" } } },
            { type: "custom", providerOptions: { anthropic: { type: "tool-reference", toolName: "get_forecast" } } }
          ]
        }
      })
    ],
    expected: {
      messages: [
        user(
          toolResultBlock("search-1", [
            { tool_name: "get_weather", type: "tool_reference" },
            { tool_name: "get_forecast", type: "tool_reference" }
          ])
        )
      ]
    },
    verdict: { refused: "AI SDK message 0 content[0].output.value[0]" }
  },
  {
    name: "should handle tool result with url-based PDF content",
    prompt: [
      tool({
        type: "tool-result",
        toolName: "get-pdf",
        toolCallId: "get-pdf-1",
        output: { type: "content", value: [{ type: "file-url", url: "https://example.com/document.pdf" }] }
      })
    ],
    expected: {
      messages: [
        user(
          toolResultBlock("get-pdf-1", [
            { source: { type: "url", url: "https://example.com/document.pdf" }, type: "document" }
          ])
        )
      ]
    },
    verdict: "same"
  },
  {
    name: "should handle tool result with url-based image content",
    prompt: [
      tool({
        type: "tool-result",
        toolName: "image-generator",
        toolCallId: "image-gen-1",
        output: { type: "content", value: [{ type: "image-url", url: "https://example.com/image.png" }] }
      })
    ],
    expected: {
      messages: [
        user(
          toolResultBlock("image-gen-1", [
            { source: { type: "url", url: "https://example.com/image.png" }, type: "image" }
          ])
        )
      ]
    },
    verdict: "same"
  },
  // describe('assistant messages')
  {
    name: "should preserve citations on assistant text",
    prompt: [
      assistant(
        text("The Federal Reserve held rates steady.", {
          providerOptions: {
            anthropic: {
              citations: [
                {
                  type: "web_search_result_location",
                  cited_text: "The Committee decided to maintain the rate.",
                  url: "https://example.com/fed-decision",
                  title: "Federal Reserve decision",
                  encrypted_index: "encrypted-index"
                }
              ]
            }
          }
        })
      ),
      user(text("What happened before that?"))
    ],
    view: (out) => out.messages,
    expected: [
      assistant(
        text("The Federal Reserve held rates steady.", {
          citations: [
            {
              cited_text: "The Committee decided to maintain the rate.",
              encrypted_index: "encrypted-index",
              title: "Federal Reserve decision",
              type: "web_search_result_location",
              url: "https://example.com/fed-decision"
            }
          ]
        })
      ),
      user(text("What happened before that?"))
    ],
    verdict: "same",
    aiSdk: {
      needs: "options",
      otherwise: { refused: "AI SDK message 0 content[0]: provider option anthropic.citations is not kept" }
    }
  },
  {
    name: "should remove trailing whitespace from last assistant message when there is no further user message",
    prompt: [user(text("user content")), assistant(text("assistant content  "))],
    expected: { messages: [user(text("user content")), assistant(text("assistant content"))] },
    verdict: "same"
  },
  {
    name: "should remove trailing whitespace from last assistant message with multi-part content when there is no further user message",
    prompt: [user(text("user content")), assistant(text("assistant "), text("content  "))],
    expected: { messages: [user(text("user content")), assistant(text("assistant "), text("content"))] },
    verdict: "same"
  },
  {
    name: "should keep trailing whitespace from assistant message when there is a further user message",
    prompt: [user(text("user content")), assistant(text("assistant content  ")), user(text("user content 2"))],
    expected: {
      messages: [user(text("user content")), assistant(text("assistant content  ")), user(text("user content 2"))]
    },
    verdict: "same"
  },
  {
    name: "should combine multiple sequential assistant messages into a single message",
    prompt: [user(text("Hi!")), assistant(text("Hello")), assistant(text("World")), assistant(text("!"))],
    expected: { messages: [user(text("Hi!")), assistant(text("Hello"), text("World"), text("!"))] },
    verdict: separateRule({
      messages: [user(text("Hi!")), assistant(text("Hello")), assistant(text("World")), assistant(text("!"))]
    })
  },
  {
    name: "should convert assistant message reasoning parts with signature into thinking parts when sendReasoning is true",
    prompt: [assistant(signed(strawberry, "test-signature"), strawberryAnswer)],
    expected: {
      messages: [assistant({ type: "thinking", thinking: strawberry, signature: "test-signature" }, strawberryAnswer)]
    },
    verdict: "same"
  },
  {
    name: "should ignore reasoning parts without signature into thinking parts when sendReasoning is true",
    prompt: [assistant({ type: "reasoning", text: strawberry }, strawberryAnswer)],
    expected: { messages: [assistant(strawberryAnswer)] },
    verdict: "same"
  },
  {
    name: "should omit assistant message reasoning parts with signature when sendReasoning is false",
    prompt: [assistant(signed(strawberry, "test-signature"), strawberryAnswer)],
    sendReasoning: false,
    expected: { messages: [assistant(strawberryAnswer)] },
    verdict: "same"
  },
  {
    name: "should omit reasoning parts without signature when sendReasoning is false",
    prompt: [assistant({ type: "reasoning", text: strawberry }, strawberryAnswer)],
    sendReasoning: false,
    expected: { messages: [assistant(strawberryAnswer)] },
    verdict: "same"
  },
  {
    name: "should convert anthropic web_search tool call and result parts",
    prompt: [
      assistant(
        serverCall("srvtoolu_011cNtbtzFARKPcAcp7w4nh9", "web_search", {
          query: "San Francisco major news events June 22 2025"
        }),
        jsonResult("srvtoolu_011cNtbtzFARKPcAcp7w4nh9", "web_search", [webSearchResult])
      )
    ],
    sendReasoning: false,
    expected: {
      messages: [
        assistant(
          serverUse("srvtoolu_011cNtbtzFARKPcAcp7w4nh9", "web_search", {
            query: "San Francisco major news events June 22 2025"
          }),
          {
            type: "web_search_tool_result",
            tool_use_id: "srvtoolu_011cNtbtzFARKPcAcp7w4nh9",
            content: [webSearchBlock]
          }
        )
      ]
    },
    verdict: "same"
  },
  {
    name: "should move regular tool_use blocks after provider-executed web_search results",
    prompt: [
      assistant(
        text("I will save a note and search the web."),
        {
          type: "tool-call",
          toolCallId: "toolu_regular",
          toolName: "saveNote",
          input: { note: "Searching for basketball news" }
        },
        serverCall("srvtoolu_web_search", "web_search", { query: "basketball news today" }),
        jsonResult("srvtoolu_web_search", "web_search", [
          {
            url: "https://www.nba.com/news",
            title: "NBA News",
            pageAge: "1 hour ago",
            encryptedContent: "encrypted-content",
            type: "web_search_result"
          }
        ])
      ),
      tool(jsonResult("toolu_regular", "saveNote", { success: true }))
    ],
    sendReasoning: false,
    view: (out) => out.messages,
    expected: [
      assistant(
        text("I will save a note and search the web."),
        serverUse("srvtoolu_web_search", "web_search", { query: "basketball news today" }),
        {
          type: "web_search_tool_result",
          tool_use_id: "srvtoolu_web_search",
          content: [
            {
              url: "https://www.nba.com/news",
              title: "NBA News",
              page_age: "1 hour ago",
              encrypted_content: "encrypted-content",
              type: "web_search_result"
            }
          ]
        },
        { type: "tool_use", id: "toolu_regular", name: "saveNote", input: { note: "Searching for basketball news" } }
      ),
      user(toolResultBlock("toolu_regular", JSON.stringify({ success: true })))
    ],
    verdict: "same"
  },
  {
    name: "should not move regular tool_use blocks across thinking blocks",
    prompt: [
      assistant(
        signed("Think before the initial note.", "test-signature-1"),
        {
          type: "tool-call",
          toolCallId: "toolu_initial",
          toolName: "saveNote",
          input: { note: "phase 1: initial plan" }
        },
        signed("Think before the revised note.", "test-signature-2"),
        {
          type: "tool-call",
          toolCallId: "toolu_revised",
          toolName: "saveNote",
          input: { note: "phase 2: revised plan" }
        }
      ),
      tool(
        jsonResult("toolu_initial", "saveNote", { success: true }),
        jsonResult("toolu_revised", "saveNote", { success: true })
      )
    ],
    view: (out) => out.messages,
    expected: [
      assistant(
        { type: "thinking", thinking: "Think before the initial note.", signature: "test-signature-1" },
        { type: "tool_use", id: "toolu_initial", name: "saveNote", input: { note: "phase 1: initial plan" } },
        { type: "thinking", thinking: "Think before the revised note.", signature: "test-signature-2" },
        { type: "tool_use", id: "toolu_revised", name: "saveNote", input: { note: "phase 2: revised plan" } }
      ),
      user(
        toolResultBlock("toolu_initial", JSON.stringify({ success: true })),
        toolResultBlock("toolu_revised", JSON.stringify({ success: true }))
      )
    ],
    verdict: "same"
  },
  ...(
    [
      [
        "should convert anthropic web_search tool call with error result (error-json string)",
        "srvtoolu_error1",
        "invalid_tool_input",
        true
      ],
      [
        "should convert anthropic web_search tool call with error result (error-json object)",
        "srvtoolu_error2",
        "max_uses_exceeded",
        false
      ]
    ] as const
  ).map(
    ([name, id, code, asString]): Case => ({
      name,
      prompt: [
        assistant(serverCall(id, "web_search", { query: "test query" }), {
          type: "tool-result",
          toolCallId: id,
          toolName: "web_search",
          output: {
            type: "error-json",
            value: asString
              ? JSON.stringify({ type: "web_search_tool_result_error", errorCode: code })
              : { type: "web_search_tool_result_error", errorCode: code }
          }
        })
      ],
      sendReasoning: false,
      expected: {
        messages: [
          assistant(serverUse(id, "web_search", { query: "test query" }), {
            type: "web_search_tool_result",
            tool_use_id: id,
            content: { error_code: code, type: "web_search_tool_result_error" }
          })
        ]
      },
      verdict: "same"
    })
  ),
  {
    name: "should convert anthropic web_fetch tool call and result parts",
    prompt: [
      assistant(
        serverCall("srvtoolu_011cNtbtzFARKPcAcp7w4nh9", "web_fetch", {
          url: "https://raw.githubusercontent.com/vercel/ai/blob/main/examples/ai-functions/data/ai.pdf"
        }),
        jsonResult("srvtoolu_011cNtbtzFARKPcAcp7w4nh9", "web_fetch", {
          type: "web_fetch_result",
          url: "https://raw.githubusercontent.com/vercel/ai/blob/main/examples/ai-functions/data/ai.pdf",
          retrievedAt: "2025-01-01T00:00:00.000Z",
          content: {
            type: "document",
            title: "AI.pdf",
            citations: { enabled: true },
            source: { type: "text", mediaType: "text/plain", data: "The PDF says about AI." }
          }
        })
      )
    ],
    sendReasoning: false,
    expected: {
      messages: [
        assistant(
          serverUse("srvtoolu_011cNtbtzFARKPcAcp7w4nh9", "web_fetch", {
            url: "https://raw.githubusercontent.com/vercel/ai/blob/main/examples/ai-functions/data/ai.pdf"
          }),
          {
            type: "web_fetch_tool_result",
            tool_use_id: "srvtoolu_011cNtbtzFARKPcAcp7w4nh9",
            content: {
              content: {
                citations: { enabled: true },
                source: { data: "The PDF says about AI.", media_type: "text/plain", type: "text" },
                title: "AI.pdf",
                type: "document"
              },
              retrieved_at: "2025-01-01T00:00:00.000Z",
              type: "web_fetch_result",
              url: "https://raw.githubusercontent.com/vercel/ai/blob/main/examples/ai-functions/data/ai.pdf"
            }
          }
        )
      ]
    },
    verdict: "same"
  },
  ...(
    [
      [
        "should convert anthropic web_fetch tool call with error result",
        "srvtoolu_016yTvwN6L1sDdjdPUzPbZRV",
        "https://httpbin.org/status/500",
        JSON.stringify({ type: "web_fetch_tool_result_error", errorCode: "url_not_accessible" }),
        "url_not_accessible"
      ],
      [
        "should convert anthropic web_fetch tool call with error result as object",
        "srvtoolu_01JteKo9VRHDKZ1rdMXywnwD",
        "https://www.fotball.no/fotballdata/turnering/hjem/?fiksId=193156",
        { type: "web_fetch_tool_result_error", errorCode: "url_not_allowed" },
        "url_not_allowed"
      ],
      [
        "should convert anthropic web_fetch tool call with error result as malformed string",
        "srvtoolu_test123",
        "https://example.com",
        "not valid json at all",
        "unavailable"
      ]
    ] as const
  ).map(([name, id, url, value, code]): Case => {
    const result = {
      type: "web_fetch_tool_result",
      tool_use_id: id,
      content: { error_code: code, type: "web_fetch_tool_result_error" }
    }
    const malformed = code === "unavailable"
    return {
      name,
      prompt: [
        assistant(serverCall(id, "web_fetch", { url }), {
          type: "tool-result",
          toolCallId: id,
          toolName: "web_fetch",
          output: { type: "error-json", value }
        })
      ],
      sendReasoning: false,
      ...(malformed ? { view: secondBlock } : {}),
      expected: malformed ? result : { messages: [assistant(serverUse(id, "web_fetch", { url }), result)] },
      verdict: "same"
    }
  }),
  {
    name: "should convert anthropic tool_search_tool_regex tool call and result parts",
    prompt: [
      assistant(
        serverCall("srvtoolu_01SACvPAnp6ucMJsstB5qb3f", "tool_search_tool_regex", {
          pattern: "weather|forecast",
          limit: 10
        }),
        jsonResult("srvtoolu_01SACvPAnp6ucMJsstB5qb3f", "tool_search_tool_regex", [
          { type: "tool_reference", toolName: "get_weather" }
        ])
      )
    ],
    sendReasoning: false,
    expected: {
      messages: [
        assistant(
          serverUse("srvtoolu_01SACvPAnp6ucMJsstB5qb3f", "tool_search_tool_regex", {
            limit: 10,
            pattern: "weather|forecast"
          }),
          {
            type: "tool_search_tool_result",
            tool_use_id: "srvtoolu_01SACvPAnp6ucMJsstB5qb3f",
            content: {
              tool_references: [{ tool_name: "get_weather", type: "tool_reference" }],
              type: "tool_search_tool_search_result"
            }
          }
        )
      ]
    },
    verdict: "same"
  },
  // describe('advisor 20260301 multi-turn round-trip')
  {
    name: "should convert advisor server_tool_use + advisor_result back to the API shape",
    prompt: advisorPrompt("srvtoolu_advisor_abc123", {
      type: "advisor_result",
      text: "Use a channel-based coordination pattern. Close the input channel first, then wait on a WaitGroup."
    }),
    sendReasoning: false,
    expected: {
      messages: [
        assistant(serverUse("srvtoolu_advisor_abc123", "advisor", {}), {
          type: "advisor_tool_result",
          tool_use_id: "srvtoolu_advisor_abc123",
          content: {
            text: "Use a channel-based coordination pattern. Close the input channel first, then wait on a WaitGroup.",
            type: "advisor_result"
          }
        })
      ]
    },
    verdict: "same"
  },
  {
    name: "should round-trip advisor_redacted_result verbatim across turns",
    prompt: advisorPrompt("srvtoolu_advisor_redacted", {
      type: "advisor_redacted_result",
      encryptedContent: "opaque-encrypted-blob-xyz"
    }),
    sendReasoning: false,
    view: secondBlock,
    expected: {
      type: "advisor_tool_result",
      tool_use_id: "srvtoolu_advisor_redacted",
      content: { encrypted_content: "opaque-encrypted-blob-xyz", type: "advisor_redacted_result" }
    },
    verdict: "same"
  },
  {
    name: "should convert advisor_tool_result_error back to the API shape",
    prompt: advisorPrompt("srvtoolu_advisor_err", {
      type: "advisor_tool_result_error",
      errorCode: "max_uses_exceeded"
    }),
    sendReasoning: false,
    view: secondBlock,
    expected: {
      type: "advisor_tool_result",
      tool_use_id: "srvtoolu_advisor_err",
      content: { error_code: "max_uses_exceeded", type: "advisor_tool_result_error" }
    },
    verdict: "same"
  },
  {
    name: "should preserve multiple advisor turns interleaved with text",
    prompt: [
      user(text("Build a concurrent worker pool in Go with graceful shutdown.")),
      assistant(
        text("Let me consult the advisor on this."),
        serverCall("srvtoolu_advisor_1", "advisor", {}),
        jsonResult("srvtoolu_advisor_1", "advisor", { type: "advisor_result", text: "Use channels and a WaitGroup." }),
        text("Here is the implementation.")
      ),
      user(text("Now add a max-in-flight limit of 10."))
    ],
    sendReasoning: false,
    view: (out) => out.messages,
    expected: [
      user(text("Build a concurrent worker pool in Go with graceful shutdown.")),
      assistant(
        text("Let me consult the advisor on this."),
        serverUse("srvtoolu_advisor_1", "advisor", {}),
        {
          type: "advisor_tool_result",
          tool_use_id: "srvtoolu_advisor_1",
          content: { text: "Use channels and a WaitGroup.", type: "advisor_result" }
        },
        text("Here is the implementation.")
      ),
      user(text("Now add a max-in-flight limit of 10."))
    ],
    verdict: "same"
  },
  {
    name: "should warn (and not emit a result block) when output type is unsupported",
    prompt: [
      assistant(serverCall("srvtoolu_advisor_bad", "advisor", {}), {
        type: "tool-result",
        toolCallId: "srvtoolu_advisor_bad",
        toolName: "advisor",
        output: { type: "text", value: "should be json" }
      })
    ],
    sendReasoning: false,
    expected: "a warning; the server_tool_use block alone",
    verdict: { refused: "Anthropic message 0 parts[1]: a text output of provider tool advisor has no Anthropic block" }
  },
  // describe('code_execution 20250522')
  {
    name: "should convert anthropic code_execution tool call and result parts (20250522)",
    prompt: [
      assistant(
        serverCall("srvtoolu_01XyZ1234567890", "code_execution", { code: 'print("Hello, world!")' }),
        jsonResult("srvtoolu_01XyZ1234567890", "code_execution", {
          type: "code_execution_result",
          stdout: "Hello, world!",
          stderr: "",
          return_code: 0
        })
      )
    ],
    expected: {
      messages: [
        assistant(serverUse("srvtoolu_01XyZ1234567890", "code_execution", { code: 'print("Hello, world!")' }), {
          type: "code_execution_tool_result",
          tool_use_id: "srvtoolu_01XyZ1234567890",
          content: { content: [], return_code: 0, stderr: "", stdout: "Hello, world!", type: "code_execution_result" }
        })
      ]
    },
    verdict: "same"
  },
  {
    name: "should pass back encrypted_code_execution_result for multi-turn (web_fetch_20260209/web_search_20260209)",
    prompt: [
      assistant(
        serverCall("srvtoolu_webfetch_01", "web_fetch", { url: "https://example.com" }),
        jsonResult("srvtoolu_webfetch_01", "web_fetch", {
          type: "web_fetch_result",
          url: "https://example.com",
          retrievedAt: "2026-01-01T00:00:00Z",
          content: {
            type: "document",
            title: "Example",
            source: { type: "text", mediaType: "text/plain", data: "hello" }
          }
        }),
        serverCall("srvtoolu_codeexec_01", "code_execution", { code: 'print("done")' }),
        jsonResult("srvtoolu_codeexec_01", "code_execution", {
          type: "encrypted_code_execution_result",
          encrypted_stdout: "enc_abc123",
          stderr: "",
          return_code: 0,
          content: []
        })
      )
    ],
    view: (out) =>
      ((out.messages[0]?.content ?? []) as ReadonlyArray<Record<string, Json>>).find(
        (block) => block.type === "code_execution_tool_result"
      )?.content,
    expected: {
      type: "encrypted_code_execution_result",
      encrypted_stdout: "enc_abc123",
      stderr: "",
      return_code: 0,
      content: []
    },
    verdict: "same"
  },
  // describe('code_execution 20250825')
  {
    name: "should convert anthropic code_execution tool call and result parts (20250825)",
    prompt: fibonacciPrompt,
    expected: fibonacciExpected,
    verdict: "same"
  },
  // describe('code_execution 20260120')
  {
    name: "should preserve caller metadata and response order for dynamic filtering",
    prompt: [
      assistant(
        serverCall(
          "code-execution-call",
          "code_execution",
          { type: "programmatic-tool-call", code: 'await web_search({ query: "AI SDK" })' },
          { providerOptions: { anthropic: { caller: { type: "direct" } } } }
        ),
        ...["1", "2"].flatMap((n) => {
          const caller = { anthropic: { caller: { type: "code_execution_20260120", toolId: "code-execution-call" } } }
          return [
            serverCall(
              `web-search-call-${n}`,
              "web_search",
              { query: n === "1" ? "AI SDK" : "Anthropic" },
              { providerOptions: caller }
            ),
            jsonResult(`web-search-call-${n}`, "web_search", [], { providerOptions: caller })
          ]
        }),
        jsonResult("code-execution-call", "code_execution", {
          type: "encrypted_code_execution_result",
          encrypted_stdout: "encrypted-output",
          stderr: "",
          return_code: 0,
          content: []
        })
      )
    ],
    view: (out) => out.messages,
    subset: true,
    expected: [
      {
        role: "assistant",
        content: [
          { type: "server_tool_use", id: "code-execution-call", caller: { type: "direct" } },
          ...["1", "2"].flatMap((n) => {
            const caller = { type: "code_execution_20260120", tool_id: "code-execution-call" }
            return [
              { type: "server_tool_use", id: `web-search-call-${n}`, caller },
              { type: "web_search_tool_result", tool_use_id: `web-search-call-${n}`, caller }
            ]
          }),
          { type: "code_execution_tool_result", tool_use_id: "code-execution-call" }
        ]
      }
    ],
    verdict: "same",
    aiSdk: {
      needs: "options",
      otherwise: { refused: "AI SDK message 0 content[0]: provider option anthropic.caller is not kept" }
    }
  },
  {
    name: "should preserve a deferred server result across a client tool continuation",
    prompt: [
      assistant(
        serverCall(
          "code-execution-call",
          "code_execution",
          { type: "programmatic-tool-call", code: 'await fetch_url({ url: "https://example.com" })' },
          { providerOptions: { anthropic: { caller: { type: "direct" } } } }
        ),
        {
          type: "tool-call",
          toolCallId: "client-tool-call",
          toolName: "fetch_url",
          input: { url: "https://example.com" },
          providerOptions: { anthropic: { caller: { type: "code_execution_20260120", toolId: "code-execution-call" } } }
        }
      ),
      tool({
        type: "tool-result",
        toolCallId: "client-tool-call",
        toolName: "fetch_url",
        output: { type: "text", value: "Example Domain" }
      }),
      assistant(
        jsonResult("code-execution-call", "code_execution", {
          type: "encrypted_code_execution_result",
          encrypted_stdout: "encrypted-output",
          stderr: "",
          return_code: 0,
          content: []
        })
      )
    ],
    view: (out) => out.messages,
    subset: true,
    expected: [
      {
        role: "assistant",
        content: [
          { type: "server_tool_use", id: "code-execution-call", caller: { type: "direct" } },
          {
            type: "tool_use",
            id: "client-tool-call",
            caller: { type: "code_execution_20260120", tool_id: "code-execution-call" }
          }
        ]
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "client-tool-call" }] },
      { role: "assistant", content: [{ type: "code_execution_tool_result", tool_use_id: "code-execution-call" }] }
    ],
    verdict: "same",
    aiSdk: {
      needs: "options",
      otherwise: { refused: "AI SDK message 0 content[0]: provider option anthropic.caller is not kept" }
    }
  },
  {
    name: "should replay server_tool_use input without the internal discriminator",
    prompt: [
      assistant(
        serverCall("srvtoolu_cache_replay", "code_execution", {
          type: "bash_code_execution",
          command: "echo cache-compatible"
        })
      )
    ],
    view: (out) => out.messages,
    expected: [
      assistant(serverUse("srvtoolu_cache_replay", "bash_code_execution", { command: "echo cache-compatible" }))
    ],
    verdict: "same"
  },
  {
    name: "should convert anthropic code_execution tool call and result parts (20260120)",
    prompt: fibonacciPrompt,
    expected: fibonacciExpected,
    verdict: "same"
  },
  // describe('mcp tool use')
  {
    name: "should convert anthropic mcp tool use parts",
    prompt: [
      assistant(
        serverCall(
          "mcptoolu_01HXPYHs79HH36fBbKHysCrp",
          "echo",
          {},
          {
            providerOptions: { anthropic: { type: "mcp-tool-use", serverName: "echo" } }
          }
        ),
        jsonResult("mcptoolu_01HXPYHs79HH36fBbKHysCrp", "echo", [text("Tool echo: hello world")]),
        text('The echo tool responded back with "hello world" - it simply echoed the message I sent to it!')
      )
    ],
    expected: {
      messages: [
        assistant(
          {
            type: "mcp_tool_use",
            id: "mcptoolu_01HXPYHs79HH36fBbKHysCrp",
            input: {},
            name: "echo",
            server_name: "echo"
          },
          {
            type: "mcp_tool_result",
            tool_use_id: "mcptoolu_01HXPYHs79HH36fBbKHysCrp",
            content: [text("Tool echo: hello world")],
            is_error: false
          },
          text('The echo tool responded back with "hello world" - it simply echoed the message I sent to it!')
        )
      ]
    },
    verdict: "same",
    aiSdk: {
      needs: "options",
      otherwise: { refused: "AI SDK message 0 content[0]: provider option anthropic.type is not kept" }
    }
  },
  // describe('cache control')
  ...cacheCases(),
  // describe('citations')
  {
    name: "should not include citations by default",
    prompt: [user({ type: "file", data: "base64PDFdata", mediaType: "application/pdf" })],
    expected: {
      messages: [
        user({ type: "document", source: { data: "base64PDFdata", media_type: "application/pdf", type: "base64" } })
      ]
    },
    verdict: "same"
  },
  ...documentCases(),
  // describe('message sequences')
  {
    name: "should convert user-assistant-tool-assistant-user message sequence with multiple tool calls",
    prompt: [
      user(text("weather for berlin, london and paris")),
      assistant(
        text("I will use the weather tool to get the weather for berlin, london and paris"),
        ...["berlin", "london", "paris"].map((location, i) => ({
          type: "tool-call",
          toolName: "weather",
          toolCallId: `weather-call-${i + 1}`,
          input: { location }
        }))
      ),
      tool(
        ...["sunny", "cloudy", "rainy"].map((weather, i) => jsonResult(`weather-call-${i + 1}`, "weather", { weather }))
      ),
      assistant(
        text("The weather for berlin is sunny, the weather for london is cloudy, and the weather for paris is rainy")
      ),
      user(text("and for new york?"))
    ],
    expected: {
      messages: [
        user(text("weather for berlin, london and paris")),
        assistant(
          text("I will use the weather tool to get the weather for berlin, london and paris"),
          ...["berlin", "london", "paris"].map((location, i) => ({
            type: "tool_use",
            id: `weather-call-${i + 1}`,
            input: { location },
            name: "weather"
          }))
        ),
        user(
          ...["sunny", "cloudy", "rainy"].map((weather, i) =>
            toolResultBlock(`weather-call-${i + 1}`, JSON.stringify({ weather }))
          )
        ),
        assistant(
          text("The weather for berlin is sunny, the weather for london is cloudy, and the weather for paris is rainy")
        ),
        user(text("and for new york?"))
      ]
    },
    verdict: "same"
  }
]

/**
 * describe('cache control'): the prompt's hints stay on the converted messages and parts
 * (`fromLanguageModelPrompt`'s default, `cacheHints: "keep"`), where `toAnthropic` places them.
 */
function cacheCases(): ReadonlyArray<Case> {
  const hinted = (name: string, prompt: ReadonlyArray<unknown>, expected: Json): Case => ({
    name,
    prompt,
    expected,
    verdict: "same"
  })
  const twoTexts = (role: "user" | "assistant") => [
    ...(role === "assistant" ? [user(text("user-content"))] : []),
    { role, content: [text("part1"), text("part2")], providerOptions: cache }
  ]
  const twoTextsOut = (role: "user" | "assistant") => ({
    messages: [
      ...(role === "assistant" ? [user(text("user-content"))] : []),
      { role, content: [text("part1"), text("part2", { cache_control: ephemeral })] }
    ]
  })
  return [
    hinted(
      "should set cache_control on system message with message cache control",
      [{ role: "system", content: "system message", providerOptions: cache }],
      { messages: [], system: [text("system message", { cache_control: ephemeral })] }
    ),
    hinted(
      "should set cache_control on user message part with part cache control",
      [user(text("test", { providerOptions: cache }))],
      { messages: [user(text("test", { cache_control: ephemeral }))] }
    ),
    hinted(
      "should set cache_control on last user message part with message cache control",
      twoTexts("user"),
      twoTextsOut("user")
    ),
    hinted(
      "should set cache_control on assistant message text part with part cache control",
      [user(text("user-content")), assistant(text("test", { providerOptions: cache }))],
      { messages: [user(text("user-content")), assistant(text("test", { cache_control: ephemeral }))] }
    ),
    hinted(
      "should set cache_control on assistant tool call part with part cache control",
      [
        user(text("user-content")),
        assistant({
          type: "tool-call",
          toolCallId: "test-id",
          toolName: "test-tool",
          input: { some: "arg" },
          providerOptions: cache
        })
      ],
      {
        messages: [
          user(text("user-content")),
          assistant({
            type: "tool_use",
            name: "test-tool",
            id: "test-id",
            input: { some: "arg" },
            cache_control: ephemeral
          })
        ]
      }
    ),
    hinted(
      "should set cache_control on last assistant message part with message cache control",
      twoTexts("assistant"),
      twoTextsOut("assistant")
    ),
    hinted(
      "should set cache_control on tool result message part with part cache control",
      [tool(jsonResult("test", "test", { test: "test" }, { providerOptions: cache }))],
      { messages: [user(toolResultBlock("test", '{"test":"test"}', { cache_control: ephemeral }))] }
    ),
    hinted(
      "should set cache_control on tool result with output cache control",
      [
        tool({
          type: "tool-result",
          toolName: "test",
          toolCallId: "test",
          output: { type: "text", value: "test", providerOptions: cache }
        })
      ],
      { messages: [user(toolResultBlock("test", "test", { cache_control: ephemeral }))] }
    ),
    {
      name: "should set cache_control on tool result with content output cache control",
      prompt: [
        tool({
          type: "tool-result",
          toolName: "test",
          toolCallId: "test",
          output: { type: "content", value: [text("test", { providerOptions: cache })] }
        })
      ],
      expected: { messages: [user(toolResultBlock("test", [text("test")], { cache_control: ephemeral }))] },
      verdict: {
        rule:
          "a cache hint on one item of a tool result's content stays on that item's block (Anthropic takes " +
          "cache_control on the blocks inside a tool_result); `@ai-sdk/anthropic` moves it to the tool_result",
        expected: () => ({ messages: [user(toolResultBlock("test", [text("test", { cache_control: ephemeral })]))] })
      }
    },
    hinted(
      "should set cache_control on last tool result message part with message cache control",
      [
        {
          role: "tool",
          content: [jsonResult("part1", "test", { test: "part1" }), jsonResult("part2", "test", { test: "part2" })],
          providerOptions: cache
        }
      ],
      {
        messages: [
          user(
            toolResultBlock("part1", '{"test":"part1"}'),
            toolResultBlock("part2", '{"test":"part2"}', { cache_control: ephemeral })
          )
        ]
      }
    ),
    // describe('cache control validation'): `@ai-sdk/anthropic` ignores these hints with a warning.
    {
      name: "should reject cache_control on thinking blocks",
      prompt: [
        assistant({
          type: "reasoning",
          text: "thinking content",
          providerOptions: { anthropic: { signature: "test-sig", cacheControl: { type: "ephemeral" } } }
        })
      ],
      expected: { messages: [assistant({ type: "thinking", thinking: "thinking content", signature: "test-sig" })] },
      verdict: { refused: "Anthropic message 0 parts[0]: thinking takes no cache_control" }
    },
    {
      name: "should reject cache_control on redacted thinking blocks",
      prompt: [
        assistant({
          type: "reasoning",
          text: "redacted",
          providerOptions: { anthropic: { redactedData: "abc123", cacheControl: { type: "ephemeral" } } }
        })
      ],
      view: (out) => ((out.messages[0]?.content ?? []) as ReadonlyArray<Json>)[0],
      expected: { type: "redacted_thinking", data: "abc123" },
      verdict: { refused: "Anthropic message 0 parts[0]: thinking takes no cache_control" }
    },
    {
      name: "should limit cache breakpoints to 4",
      prompt: [
        { role: "system", content: "system 1", providerOptions: cache },
        { role: "system", content: "system 2", providerOptions: cache },
        user(text("user 1", { providerOptions: cache })),
        assistant(text("assistant 1", { providerOptions: cache })),
        user(text("user 2 (should be rejected)", { providerOptions: cache }))
      ],
      expected: {
        system: [text("system 1", { cache_control: ephemeral }), text("system 2", { cache_control: ephemeral })],
        messages: [
          user(text("user 1", { cache_control: ephemeral })),
          assistant(text("assistant 1", { cache_control: ephemeral })),
          user(text("user 2 (should be rejected)"))
        ]
      },
      verdict: { refused: "Anthropic message 4 parts[0]: a cache breakpoint beyond the API's 4" }
    }
  ]
}

/** describe('citations'): document settings in the file part's `providerOptions.anthropic`. */
function documentCases(): ReadonlyArray<Case> {
  const pdf = (data: string, extra: object) => ({ type: "file", data, mediaType: "application/pdf", ...extra })
  const block = (data: string, extra: object) => ({
    type: "document",
    source: { data, media_type: "application/pdf", type: "base64" },
    ...extra
  })
  const needsOptions = {
    needs: "options" as const,
    otherwise: { refused: "AI SDK message 0 content[0]: provider option anthropic." }
  }
  return [
    {
      name: "should include citations when enabled on file part",
      prompt: [user(pdf("base64PDFdata", { providerOptions: { anthropic: { citations: { enabled: true } } } }))],
      expected: { messages: [user(block("base64PDFdata", { citations: { enabled: true } }))] },
      verdict: "same",
      aiSdk: needsOptions
    },
    {
      name: "should include custom title and context when provided",
      prompt: [
        user(
          pdf("base64PDFdata", {
            filename: "original-name.pdf",
            providerOptions: {
              anthropic: {
                title: "Custom Document Title",
                context: "This is metadata about the document",
                citations: { enabled: true }
              }
            }
          })
        )
      ],
      expected: {
        messages: [
          user(
            block("base64PDFdata", {
              citations: { enabled: true },
              context: "This is metadata about the document",
              title: "Custom Document Title"
            })
          )
        ]
      },
      verdict: "same",
      aiSdk: needsOptions
    },
    {
      name: "should handle multiple documents with consistent citation settings",
      prompt: [
        user(
          pdf("base64PDFdata1", {
            filename: "doc1.pdf",
            providerOptions: { anthropic: { citations: { enabled: true }, title: "Custom Title 1" } }
          }),
          pdf("base64PDFdata2", {
            filename: "doc2.pdf",
            providerOptions: {
              anthropic: {
                citations: { enabled: true },
                title: "Custom Title 2",
                context: "Additional context for document 2"
              }
            }
          }),
          text("Analyze both documents")
        )
      ],
      expected: {
        messages: [
          user(
            block("base64PDFdata1", { citations: { enabled: true }, title: "Custom Title 1" }),
            block("base64PDFdata2", {
              citations: { enabled: true },
              context: "Additional context for document 2",
              title: "Custom Title 2"
            }),
            text("Analyze both documents")
          )
        ]
      },
      verdict: "same",
      aiSdk: needsOptions
    }
  ]
}

describe("@ai-sdk/anthropic prompt-conversion cases through ctxlog (fromLanguageModelPrompt → toAnthropic)", () => {
  for (const scenario of cases) {
    it(scenario.name, () => {
      const verdict = active(scenario)
      const result = run(scenario)
      if (verdict !== "same" && "refused" in verdict) {
        assert.isTrue(Either.isLeft(result), "expected an AdapterError naming the part")
        if (Either.isLeft(result)) assert.include(result.left.message, verdict.refused)
        return
      }
      if (Either.isLeft(result)) return assert.fail(result.left.message)
      const out: Out = {
        ...(result.right.system.length === 0 ? {} : { system: result.right.system }),
        messages: result.right.messages as unknown as ReadonlyArray<Record<string, Json>>
      }
      const ours = plain((scenario.view ?? ((whole: Out) => whole))(plain(out) as Out))
      const upstream = plain(scenario.expected)
      const wanted = verdict === "same" ? upstream : plain(verdict.expected(upstream))
      if (verdict !== "same" && "rule" in verdict) assert.notDeepEqual(wanted, upstream, "the rule changes nothing")
      if (scenario.subset === true) assert.isTrue(contains(ours, wanted), JSON.stringify(ours))
      else assert.deepStrictEqual(ours, wanted)
    })
  }

  it("every case of the file is here, by name, once", () => {
    const names = cases.map((scenario) => scenario.name)
    assert.strictEqual(new Set(names).size, names.length)
    assert.strictEqual(cases.length, 72)
  })

  it("tally (test/conversionCoverage.md)", () => {
    const verdicts = cases.map((scenario) => outcomeOf(active(scenario)))
    const tally = assertCoverageRow("anthropicPromptConversion", verdicts)
    console.log(
      `@ai-sdk/anthropic prompt conversion: ${JSON.stringify(tally)}; AI SDK side keeps ${JSON.stringify(kept)}`
    )
    // No case is dropped without an error, on either side (the verdicts have no `lost`).
    assert.strictEqual(tally.lost, 0)
  })
})
