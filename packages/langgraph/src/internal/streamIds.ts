/**
 * Stream ids of LangGraph threads: `langgraph:<thread_id>` for the root namespace and
 * `langgraph:<thread_id>/<checkpoint_ns>` for a subgraph's, with `%` and `/` percent-encoded in both
 * parts so that the mapping is one-to-one and a thread's streams share the prefix `langgraph:<thread_id>`.
 */

const prefix = "langgraph:"

const escapePart = (part: string): string => part.replace(/[%/]/g, (char) => (char === "%" ? "%25" : "%2F"))
const unescapePart = (part: string): string => part.replace(/%2F/g, "/").replace(/%25/g, "%")

/** The stream of a thread's namespace. */
export const streamOf = (threadId: string, namespace: string): string =>
  namespace === "" ? `${prefix}${escapePart(threadId)}` : `${prefix}${escapePart(threadId)}/${escapePart(namespace)}`

/** The thread and namespace of a saver stream, or `undefined` for any other stream. */
export const parseStream = (stream: string): { readonly threadId: string; readonly namespace: string } | undefined => {
  if (!stream.startsWith(prefix)) return undefined
  const rest = stream.slice(prefix.length)
  const slash = rest.indexOf("/")
  return slash === -1
    ? { threadId: unescapePart(rest), namespace: "" }
    : { threadId: unescapePart(rest.slice(0, slash)), namespace: unescapePart(rest.slice(slash + 1)) }
}
