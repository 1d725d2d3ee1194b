/**
 * @ctxlog/integrations — ctxlog inside the agent frameworks: the AI SDK middleware and step hooks
 * (`@ctxlog/integrations/ai-sdk`) and the OpenAI Agents SDK session (`@ctxlog/integrations/openai-agents`).
 *
 * @since 0.1.0
 */
export {
  answerOf,
  builderOf,
  type CtxlogMiddleware,
  type CtxlogOptions,
  type CtxlogSteps,
  ctxlogMiddleware,
  ctxlogPrepareStep,
  defaultPolicy,
  usageOf
} from "./aiSdk.js"
export { CtxlogSession, type CtxlogSessionOptions } from "./openaiAgents.js"
