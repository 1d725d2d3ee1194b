/** The framework formats a builder hands a render over in (`FrameworkFormat.formats`), with no imports so config schemas can use them. */
export const formats = ["ai-sdk", "openai-agents", "langchain"] as const
