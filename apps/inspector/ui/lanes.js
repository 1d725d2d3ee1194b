// The viewer's cache lane and policy comparison (issues 37 and 38). The cache lane sits under the
// chart, on the chart's version axis: per model call a bar split into what the cache model predicts
// was read from the prompt cache, written to it and sent uncached, and the cause of each miss (the
// `/cache` view: what `ctxlog cache` prints). The comparison replays the stream under two policies
// (the `/compare` view: the recording and the policies `ctxlog serve --policy` was given) and draws
// both runs on one chart over model calls: their prompt-token lines, their cache lanes, and what each
// lost at the call where it went. Every mark is a DOM element with data- attributes the browser tests read.
import htm from "htm"
import { h } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"

const html = htm.bind(h)

const get = async (path) => {
  const response = await fetch(path, { credentials: "same-origin" })
  const body = await response.json()
  if (!response.ok) throw new Error(body.error ?? response.statusText)
  return body
}
const streamApi = (stream, view, params = []) => {
  const query = new URLSearchParams(params).toString()
  return get(`/api/streams/${encodeURIComponent(stream)}/${view}${query === "" ? "" : `?${query}`}`)
}

export const cacheColors = { read: "#27ae60", write: "#e67e22", uncached: "#95a5a6" }
const runColors = ["#2e6fbf", "#c0392b"]

const useWidth = () => {
  const box = useRef(null)
  const [width, setWidth] = useState(800)
  useEffect(() => {
    if (box.current === null) return
    const observer = new ResizeObserver(([entry]) => setWidth(Math.max(320, Math.floor(entry.contentRect.width))))
    observer.observe(box.current)
    return () => observer.disconnect()
  }, [])
  return [box, width]
}

/** The words for a miss: its kind, where the prompt diverged, and the events held responsible. */
export const causeText = (cause) =>
  cause === null || cause === undefined
    ? "no miss"
    : `${cause.kind}${cause.divergedAt === null ? "" : ` at ${cause.divergedAt}`}${
        cause.events.length === 0 ? "" : ` (${cause.events.map((e) => `v${e.version} ${e.type}`).join(", ")})`
      }`

const splitText = (split) => `read ${split.cacheRead} / write ${split.cacheWrite} / uncached ${split.uncached}`

// One lane: a bar per call at x, its height split read / write / uncached (bottom to top).
function LaneBars({ calls, x, top, height, barWidth, testid, onPick }) {
  return calls.map((call) => {
    const total = Math.max(1, call.split.cacheRead + call.split.cacheWrite + call.split.uncached)
    let y = top + height
    const pieces = [
      ["read", call.split.cacheRead],
      ["write", call.split.cacheWrite],
      ["uncached", call.split.uncached]
    ].map(([kind, tokens]) => {
      const h = (tokens / total) * height
      y -= h
      return html`<rect x=${x(call) - barWidth / 2} y=${y} width=${barWidth} height=${Math.max(0, h)} fill=${cacheColors[kind]} />`
    })
    return html`<g data-testid=${testid} data-key=${call.key} data-class=${call.class ?? ""}
      data-read=${call.split.cacheRead} data-write=${call.split.cacheWrite} data-uncached=${call.split.uncached}
      data-cause=${call.cause?.kind ?? ""} onClick=${onPick === undefined ? undefined : () => onPick(call)}>
      <title>${call.title}</title>${pieces}
    </g>`
  })
}

const laneLegend = html`<span><i style=${{ background: cacheColors.read }}></i>cache read</span>
  <span><i style=${{ background: cacheColors.write }}></i>cache write</span>
  <span><i style=${{ background: cacheColors.uncached }}></i>uncached</span>`

/**
 * The cache lane of one stream, on the chart's version axis (the same margins and range as the chart:
 * the versions of its points, marks and the head).
 */
export function CacheLane({ stream, head, series, selected, onSelect }) {
  const [box, width] = useWidth()
  const [state, setState] = useState({ data: null, error: null })
  useEffect(() => {
    if (stream === null || head === null) return
    let live = true
    streamApi(stream, "cache")
      .then((data) => live && setState({ data, error: null }))
      .catch((e) => live && setState({ data: null, error: e.message }))
    return () => {
      live = false
    }
  }, [stream, head])
  const calls = state.data?.calls ?? []
  if (state.error !== null)
    return html`<section class="lane" ref=${box}><div class="del">${state.error}</div></section>`
  if (series === null || series.points.length === 0 || calls.length === 0) {
    return html`<section class="lane" ref=${box}>
      <div data-testid="cache-lane" data-calls="0">${state.data === null ? "cache lane…" : "no model call recorded: no cache lane"}</div>
    </section>`
  }
  const m = { left: 58, right: 24 }
  const versions = [...series.points.map((p) => p.version), ...series.marks.map((mark) => mark.version), series.head]
  const x0 = Math.min(...versions)
  const x1 = Math.max(x0 + 1, ...versions)
  const plotW = width - m.left - m.right
  const X = (v) => m.left + ((v - x0) / (x1 - x0)) * plotW
  const barWidth = Math.max(2, Math.min(14, (plotW / calls.length) * 0.7))
  const bars = calls.map((call) => ({
    key: call.version,
    version: call.version,
    split: call.predicted,
    class: call.predicted.class,
    cause: call.cause,
    title: `v${call.version} · ${call.predicted.class} · ${splitText(call.predicted)} · ${causeText(call.cause)}`
  }))
  const current = calls.filter((call) => call.version <= (selected ?? 0)).at(-1)
  const misses = calls.filter((call) => call.cause !== null).length
  return html`<section class="lane" ref=${box}>
    <h3>Prompt cache per model call <small>${calls.length} calls · ${misses} with a cause · prices ${state.data.table}</small></h3>
    <div class="lane-legend">${laneLegend}</div>
    <svg data-testid="cache-lane" data-calls=${calls.length} width=${width} height="44" viewBox=${`0 0 ${width} 44`}
      role="img" aria-label="prompt cache read, write and uncached tokens per model call">
      <line x1=${m.left} x2=${width - m.right} y1="38" y2="38" class="axis" />
      <${LaneBars} calls=${bars} x=${(bar) => X(bar.version)} top=${4} height=${34} barWidth=${barWidth}
        testid="cache-bar" onPick=${(bar) => onSelect(bar.version)} />
      <line x1=${X(Math.min(Math.max(selected ?? x0, x0), x1))} x2=${X(Math.min(Math.max(selected ?? x0, x0), x1))} y1="0" y2="40" class="selected" />
    </svg>
    <div class="cache-cause" data-testid="cache-cause" data-version=${current?.version ?? ""} data-kind=${current?.cause?.kind ?? ""}>
      ${
        current === undefined
          ? "no model call at or before the selected version"
          : `render v${current.version} (${current.model}): ${current.predicted.class}, ${splitText(current.predicted)} tokens — ${causeText(current.cause)}`
      }
    </div>
  </section>`
}

/**
 * Two policies on one stream, on one chart over model calls: each run's prompt tokens per call (a line),
 * its cache lane, and its lost items at the calls where they went.
 */
export function Compare({ stream }) {
  const [box, width] = useWidth()
  const [names, setNames] = useState([])
  const [picked, setPicked] = useState(["recorded", "recorded"])
  const [state, setState] = useState({ data: null, error: null, loading: false })
  useEffect(() => {
    get("/api/policies")
      .then((all) => {
        setNames(all)
        setPicked([all[0] ?? "recorded", all[1] ?? all[0] ?? "recorded"])
      })
      .catch((e) => setState({ data: null, error: e.message, loading: false }))
  }, [])
  useEffect(() => setState({ data: null, error: null, loading: false }), [stream])
  const run = () => {
    setState({ data: null, error: null, loading: true })
    streamApi(stream, "compare", [
      ["policy", picked[0]],
      ["policy", picked[1]]
    ])
      .then((data) => setState({ data, error: null, loading: false }))
      .catch((e) => setState({ data: null, error: e.message, loading: false }))
  }
  const select = (index) => (event) => {
    const next = [...picked]
    next[index] = event.currentTarget.value
    setPicked(next)
  }
  const control = html`<div class="compare-control">
    ${[0, 1].map(
      (
        index
      ) => html`<label><i style=${{ background: runColors[index] }}></i>${index === 0 ? "A " : "B "}<select data-testid=${`compare-policy-${index}`} value=${picked[index]} onChange=${select(index)}>
          ${names.map((name) => html`<option value=${name}>${name}</option>`)}
        </select></label>`
    )}
    <button type="button" data-testid="compare-run" disabled=${stream === null || state.loading} onClick=${run}>
      ${state.loading ? "replaying…" : "compare"}</button>
    ${names.length <= 1 ? html`<small>only the recording: start the viewer with <code>ctxlog serve --policy FILE</code> to compare another policy</small>` : null}
  </div>`
  const data = state.data
  const body =
    state.error !== null
      ? html`<div class="del" data-testid="compare-error">${state.error}</div>`
      : data === null
        ? null
        : compareChart(data, width)
  return html`<details class="compare" ref=${box} data-testid="compare">
    <summary><h3>Compare two policies on this stream <small>replayed from the log: no model, no network</small></h3></summary>
    ${control}${body}
  </details>`
}

const totalText = (run, index) =>
  `${index === 0 ? "A" : "B"} ${run.policy}: ${run.totals.calls} calls, $${run.totals.dollars.toFixed(4)}${
    run.totals.compactor.calls === 0 ? "" : ` (compactor $${run.totals.compactor.dollars.toFixed(4)})`
  }, ${run.lost.length} lost${run.error === null ? "" : ` — ${run.error}`}`

const compareChart = (data, width) => {
  const runs = data.runs
  const count = Math.max(1, ...runs.map((run) => run.calls?.length ?? 0))
  const m = { top: 12, right: 24, left: 58 }
  const plotH = 130
  const laneH = 22
  const laneTop = m.top + plotH + 26
  const height = laneTop + runs.length * (laneH + 8) + 16
  const plotW = width - m.left - m.right
  const X = (index) => m.left + (count === 1 ? plotW / 2 : (index / (count - 1)) * plotW)
  const yMax = Math.max(10, ...runs.flatMap((run) => (run.calls ?? []).map((call) => call.promptTokens)))
  const Y = (t) => m.top + plotH - (t / (yMax * 1.1)) * plotH
  const barWidth = Math.max(2, Math.min(12, (plotW / count) * 0.35))
  const yTicks = [0, Math.round(yMax / 2), yMax]
  const lost = runs.flatMap((run, index) => run.lost.map((item) => ({ ...item, run: index, policy: run.policy })))
  return html`<div data-testid="compare-result">
    <div class="lane-legend">
      ${runs.map(
        (run, index) => html`<span data-testid="compare-total" data-policy=${run.policy} data-calls=${run.totals.calls}
          data-dollars=${run.totals.dollars.toFixed(6)} data-lost=${run.lost.length}>
          <i style=${{ background: runColors[index] }}></i>${totalText(run, index)}</span>`
      )}
      ${laneLegend}<span class="m-lost">✕ lost</span>
    </div>
    <svg data-testid="compare-chart" data-calls=${count} width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`}
      role="img" aria-label="prompt tokens and prompt cache per model call under two policies">
      ${yTicks.map(
        (t) => html`<g class="tick"><line x1=${m.left} x2=${width - m.right} y1=${Y(t)} y2=${Y(t)} class="grid" />
          <text x=${m.left - 6} y=${Y(t) + 4} text-anchor="end">${t >= 1000 ? `${(t / 1000).toFixed(1)}k` : t}</text></g>`
      )}
      <text class="title" x=${m.left + plotW / 2} y=${m.top + plotH + 18} text-anchor="middle">model call</text>
      <line x1=${m.left} x2=${width - m.right} y1=${m.top + plotH} y2=${m.top + plotH} class="axis" />
      ${runs.map((run, index) => {
        const calls = run.calls ?? []
        const d = calls
          .map((call, i) => `${i === 0 ? "M" : "L"}${X(i).toFixed(1)},${Y(call.promptTokens).toFixed(1)}`)
          .join("")
        return html`<g data-testid="compare-line" data-policy=${run.policy} data-points=${calls.length}>
          <path d=${d} fill="none" stroke=${runColors[index]} stroke-width="2" />
          ${calls.map(
            (call, i) => html`<circle cx=${X(i)} cy=${Y(call.promptTokens)} r="2.5" fill=${runColors[index]}>
              <title>${run.policy} · call ${call.call} · ${call.promptTokens} tokens · ${splitText(call)} · $${call.dollars.toFixed(4)}</title></circle>`
          )}
        </g>`
      })}
      ${lost.map((item) => {
        const call = runs[item.run].calls?.[item.callIndex]
        const cx = X(item.callIndex)
        const cy = call === undefined ? m.top + plotH : Y(call.promptTokens)
        return html`<g data-testid="compare-lost" data-policy=${item.policy} data-call=${item.call} data-kind=${item.kind} data-item=${item.item}>
          <title>${item.policy} lost ${item.kind} ${item.item} at call ${item.call}${item.removedBy === null ? "" : `, removed by ${item.removedBy.type} @v${item.removedBy.version}`}</title>
          <path d=${`M${cx - 5},${cy - 5}L${cx + 5},${cy + 5}M${cx + 5},${cy - 5}L${cx - 5},${cy + 5}`} stroke=${runColors[item.run]} stroke-width="2.5" />
        </g>`
      })}
      ${runs.map((run, index) => {
        const top = laneTop + index * (laneH + 8)
        const bars = (run.calls ?? []).map((call, i) => ({
          key: `${run.policy}:${i}`,
          index: i,
          split: call,
          title: `${run.policy} · call ${call.call} · ${splitText(call)}`
        }))
        return html`<g data-testid="compare-lane" data-policy=${run.policy} data-calls=${bars.length}>
          <text x=${m.left - 6} y=${top + laneH / 2 + 4} text-anchor="end" fill=${runColors[index]}>${index === 0 ? "A" : "B"}</text>
          <${LaneBars} calls=${bars} x=${(bar) => X(bar.index)} top=${top} height=${laneH} barWidth=${barWidth} testid="compare-bar" />
        </g>`
      })}
    </svg>
    ${
      lost.length === 0
        ? html`<p data-testid="compare-lost-list" data-items="0">neither policy lost anything the recording's answers used</p>`
        : html`<ul class="lost-list" data-testid="compare-lost-list" data-items=${lost.length}>
            ${lost.map(
              (
                item
              ) => html`<li><i style=${{ background: runColors[item.run] }}></i>${item.policy} · call ${item.call} ·
                ${item.kind} <code>${item.item}</code>${item.removedBy === null ? " · never in its window in that form" : ` · removed by ${item.removedBy.type} @v${item.removedBy.version}`}</li>`
            )}
          </ul>`
    }
  </div>`
}
