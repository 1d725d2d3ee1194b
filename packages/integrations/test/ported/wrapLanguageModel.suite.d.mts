/** The dependencies the ported `wrapLanguageModel` suite runs with (see the .mjs file). */
export declare const wrapLanguageModelSuite: (deps: {
  readonly label: string
  readonly wrapLanguageModel: unknown
  readonly MockModel: unknown
  readonly specificationVersion: "v3" | "v4"
  readonly ctxlogMiddleware: unknown
  readonly t: unknown
}) => void
