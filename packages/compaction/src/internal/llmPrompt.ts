import { type Compactor, type LanguageModel, Message } from "@ctxlog/core"

export const sections: ReadonlyArray<string> = ["Goal", "Decisions", "Files touched", "Open tasks"]

const instructions = (maxSummaryTokens: number): string =>
  [
    "You compress the earlier part of an agent's conversation so the agent can continue without it.",
    `Answer with a summary of at most ${maxSummaryTokens} tokens, in Markdown, with exactly these sections:`,
    ...sections.map((title) => `## ${title}`),
    "Keep concrete facts: file paths, commands, identifiers, error messages, values decided.",
    "If a previous summary is given, merge it in: keep what is still true, drop what was superseded.",
    "Write nothing but the summary."
  ].join("\n")

const clip = (value: string, max: number): string =>
  value.length <= max ? value : `${value.slice(0, max)}\n… [${value.length - max} more characters]`

/** The conversation as plain text: tool parts are rendered, so no provider pairing rule applies. */
const transcript = (messages: ReadonlyArray<Message.Message>, maxToolOutputChars: number): string =>
  messages
    .map((message) => {
      const lines: Array<string> = []
      const body = Message.textOf(message)
      if (body.trim().length > 0) lines.push(body)
      for (const call of Message.toolCallsOf(message)) {
        lines.push(`[tool call ${call.name} ${JSON.stringify(call.input)}]`)
      }
      for (const result of Message.toolResultsOf(message)) {
        lines.push(`[tool result${result.isError ? " (error)" : ""}]\n${clip(result.content, maxToolOutputChars)}`)
      }
      return `### ${message.role}${message.kind === "chat" ? "" : ` (${message.kind})`}\n${lines.join("\n")}`
    })
    .join("\n\n")

export const request = (
  input: Compactor.CompactionInput,
  maxSummaryTokens: number,
  maxToolOutputChars: number,
  temperature: number
): LanguageModel.ModelRequest => {
  const parts: Array<string> = []
  if (input.workspace !== undefined) {
    parts.push(`Workspace: ${input.workspace} (state every file path relative to it)`)
  }
  if (input.goal !== undefined && input.goal !== null) parts.push(`Current goal: ${input.goal}`)
  if (input.previousSummary !== null) parts.push(`Previous summary:\n${input.previousSummary}`)
  parts.push(`Conversation to summarize:\n\n${transcript(input.messages, maxToolOutputChars)}`)
  return {
    system: instructions(maxSummaryTokens),
    messages: [{ role: "user", parts: [Message.text(parts.join("\n\n"))] }],
    maxOutputTokens: maxSummaryTokens,
    temperature
  }
}

export const answerText = (parts: ReadonlyArray<Message.Part>): string => Message.textOf({ parts })
