// The ctxlog time-travel viewer: preact + htm (no build step for JSX), a plain SVG chart (every mark
// is a DOM element the browser tests can read), @tanstack/virtual-core for the event timeline
// (streams of 100k events stay one screen of rows). Bundled into dist/ui/app.js by
// scripts/bundle-ui.mjs; every number shown comes from the server's query API (the same Queries
// module the CLI prints). Content is only ever inserted as text (preact text nodes), never as HTML.
//
// The place is in the URL (?stream=&v=&view=&msg=&type=&q=): a deep link opens it, a reload keeps it,
// back and forward move through it (history.pushState / popstate).
import { elementScroll, observeElementOffset, observeElementRect, Virtualizer } from "@tanstack/virtual-core"
import htm from "htm"
import { h, render } from "preact"
import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import { CacheLane, Compare } from "./lanes.js"

const html = htm.bind(h)

const get = async (path) => {
  const response = await fetch(path, { credentials: "same-origin" })
  const body = await response.json()
  if (!response.ok) throw new Error(body.error ?? response.statusText)
  return body
}
// The one write: the Restore button posts to the server, which runs `Restore.restore` (as `ctxlog restore`).
const post = async (path, value) => {
  const response = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(value)
  })
  // A read-only viewer answers 405 in plain text.
  const body = (response.headers.get("content-type") ?? "").startsWith("application/json")
    ? await response.json()
    : { error: (await response.text()).trim() }
  if (!response.ok) throw Object.assign(new Error(body.error ?? response.statusText), { tag: body.tag ?? null })
  return body
}
const api = (stream, view, params = {}) => {
  const query = new URLSearchParams(params).toString()
  return get(`/api/streams/${encodeURIComponent(stream)}/${view}${query === "" ? "" : `?${query}`}`)
}

const partitionColors = {
  system: "#6c8ebf",
  knowledge: "#82b366",
  taskState: "#d6b656",
  history: "#b85450"
}
const markColors = { compaction: "#c0392b", seam: "#2e6fbf", decision: "#7f8c8d" }
const markGlyphs = { compaction: "◆", seam: "▲", decision: "○" }
const views = ["window", "diff", "render"]

// The place, in the URL ------------------------------------------------------------------------

const readLocation = () => {
  const params = new URLSearchParams(window.location.search)
  const v = params.get("v")
  const view = params.get("view")
  return {
    stream: params.get("stream"),
    v: v === null || v === "" || !Number.isInteger(Number(v)) ? null : Number(v),
    view: views.includes(view) ? view : "window",
    msg: params.get("msg") || null,
    type: params.get("type") ?? "",
    q: params.get("q") ?? ""
  }
}

const urlOf = (place) => {
  const params = new URLSearchParams()
  if (place.stream !== null) params.set("stream", place.stream)
  if (place.v !== null) params.set("v", String(place.v))
  if (place.view !== "window") params.set("view", place.view)
  if (place.msg !== null) params.set("msg", place.msg)
  if (place.type !== "") params.set("type", place.type)
  if (place.q !== "") params.set("q", place.q)
  const query = params.toString()
  return query === "" ? window.location.pathname : `?${query}`
}

/** The place and a way to move it: a new entry in the history, or (replace) the current one. */
const usePlace = () => {
  const [place, setPlace] = useState(readLocation)
  const current = useRef(place)
  current.current = place
  useEffect(() => {
    const onPop = () => setPlace(readLocation())
    window.addEventListener("popstate", onPop)
    return () => window.removeEventListener("popstate", onPop)
  }, [])
  const navigate = (patch, replace = false) => {
    const previous = current.current
    const next = { ...previous, ...patch }
    const url = urlOf(next)
    if (url !== urlOf(previous)) window.history[replace ? "replaceState" : "pushState"](null, "", url)
    current.current = next
    setPlace(next)
  }
  return [place, navigate]
}

/** Fetch when the inputs change; a late answer for old inputs is dropped. */
const useFetch = (load, inputs) => {
  const [state, setState] = useState({ data: null, error: null })
  useEffect(() => {
    let live = true
    const pending = load()
    if (pending === null) {
      setState({ data: null, error: null })
      return
    }
    pending
      .then((data) => live && setState({ data, error: null }))
      .catch((error) => live && setState({ data: null, error: error.message }))
    return () => {
      live = false
    }
  }, inputs)
  return state
}

// Streams and timeline -------------------------------------------------------------------------

function StreamList({ streams, selected, onSelect }) {
  return html`<nav class="streams" aria-label="streams">
    <h2>Streams</h2>
    ${streams.map(
      (s) => html`<button
        data-testid="stream-item"
        data-stream=${s.stream}
        class=${s.stream === selected ? "active" : ""}
        title=${s.stream}
        onClick=${() => onSelect(s.stream)}
      >
        <strong>${s.stream}</strong>
        <small>${s.events} events · ${s.tokens} tokens</small>
        <small>${s.compactions} compactions · ${s.seams} seams</small>
      </button>`
    )}
  </nav>`
}

const rowHeight = 40

/** A message's line without its id (the row's title keeps the whole summary): "user · 11 tokens: text". */
const readable = (e) => {
  const appended = e.type === "MessageAppended" ? /^(\w+) \S+ \((\d+) tokens\): (.*)$/s.exec(e.summary) : null
  return appended === null ? e.summary : `${appended[1]} · ${appended[2]} tokens: ${appended[3]}`
}

function Timeline({ rows, selected, onSelect, snippets }) {
  const scroller = useRef(null)
  const [, setTick] = useState(0)
  const virtualizer = useMemo(
    () =>
      new Virtualizer({
        count: 0,
        getScrollElement: () => scroller.current,
        estimateSize: () => rowHeight,
        overscan: 10,
        observeElementRect,
        observeElementOffset,
        scrollToFn: elementScroll,
        onChange: () => setTick((tick) => tick + 1)
      }),
    []
  )
  virtualizer.setOptions({ ...virtualizer.options, count: rows.length })
  useEffect(() => virtualizer._didMount(), [virtualizer])
  useEffect(() => virtualizer._willUpdate())
  // A deep link or a chart click shows its row, once the timeline's height is measured (before that
  // "auto" would align the row to a zero-height viewport, out of sight).
  const height = virtualizer.scrollRect?.height ?? 0
  useEffect(() => {
    const index = rows.findIndex((row) => row.version === selected)
    if (index >= 0 && height > 0) virtualizer.scrollToIndex(index, { align: "auto" })
  }, [selected, rows, height])
  const items = virtualizer.getVirtualItems()
  return html`<div class="timeline" ref=${scroller} data-testid="timeline" data-count=${rows.length}>
    ${rows.length === 0 ? html`<div class="empty">no events match</div>` : null}
    <div style=${{ height: `${virtualizer.getTotalSize()}px`, position: "relative" }}>
      ${items.map((item) => {
        const e = rows[item.index]
        const summary = snippets?.get(e.version) ?? readable(e)
        return html`<div
          key=${e.version}
          data-testid="event-row"
          data-version=${e.version}
          data-type=${e.type}
          aria-selected=${e.version === selected ? "true" : "false"}
          class=${`event ${e.version === selected ? "selected" : ""} ${e.mark ?? ""}`}
          style=${{ transform: `translateY(${item.start}px)`, height: `${rowHeight}px` }}
          onClick=${() => onSelect(e.version)}
          title=${`v${e.version} ${e.type}: ${e.summary}`}
        >
          <div class="line1">
            <span class="v">v${e.version}</span>
            <span class="mark">${markGlyphs[e.mark] ?? ""}</span>
            <span class="type">${e.type}</span>
          </div>
          <div class="summary" data-testid="event-summary">${summary}</div>
        </div>`
      })}
    </div>
  </div>`
}

// The chart: stacked window tokens per partition over versions ------------------------------------

const niceStep = (span, count) => {
  const raw = span / Math.max(1, count)
  const power = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((candidate) => candidate >= raw) ?? 10 * power
  return step
}
const ticks = (min, max, count) => {
  const step = niceStep(max - min, count)
  const out = []
  for (let t = Math.ceil(min / step) * step; t <= max + 1e-9; t += step) out.push(Math.round(t * 1000) / 1000)
  return out
}
const short = (n) => (n >= 10000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : `${n}`)

const layers = [
  ["system", (t) => t.system],
  ["knowledge", (t) => t.knowledge],
  ["taskState", (t) => t.taskState + t.signals],
  ["history", (t) => t.history]
]

// The compaction budget and thresholds of the recorded turn policy: lines across the plot, each
// labelled at its right end (labels pushed apart when lines sit close), drawn from `series.compaction`.
const compactionLines = [
  ["budget", "compaction budget", "#8e44ad"],
  ["hard", "hard", "#c0392b"],
  ["soft", "soft", "#e67e22"],
  ["proactive", "proactive", "#7f8c8d"],
  ["target", "target", "#27ae60"]
]

function CompactionLines({ compaction, Y, left, right }) {
  if (compaction === undefined || compaction === null || compaction.none !== undefined) return null
  const lines = compactionLines.map(([key, name, color]) => {
    const tokens = key === "budget" ? compaction.budget : compaction[key].tokens
    const share = key === "budget" ? null : compaction[key].share
    return {
      key,
      color,
      tokens,
      y: Y(tokens),
      text: `${name} ${share === null ? "" : `${Math.round(share * 100)}% · `}${tokens}`
    }
  })
  // Labels sit above their line; a label closer than a line of text to the one above it moves down.
  const labels = [...lines].sort((a, b) => a.y - b.y)
  let floor = -Infinity
  for (const label of labels) {
    label.labelY = Math.max(label.y - 3, floor + 13)
    floor = label.labelY
  }
  return html`<g data-testid="chart-compaction" data-budget=${compaction.budget} data-version=${compaction.version}>
    ${lines.map(
      (
        line
      ) => html`<g data-testid="compaction-line" data-kind=${line.key} data-tokens=${line.tokens} data-y=${line.y.toFixed(1)}>
        <line x1=${left} x2=${right} y1=${line.y} y2=${line.y} stroke=${line.color}
          stroke-width=${line.key === "budget" ? 2 : 1.2} stroke-dasharray=${line.key === "budget" ? "" : "3 3"} />
        <text x=${right - 4} y=${line.labelY} text-anchor="end" class="compaction-label" fill=${line.color}>${line.text}</text>
      </g>`
    )}
  </g>`
}

function Chart({ series, selected, windowTotal, onSelect }) {
  const box = useRef(null)
  const [width, setWidth] = useState(800)
  useEffect(() => {
    if (box.current === null) return
    const observer = new ResizeObserver(([entry]) => setWidth(Math.max(320, Math.floor(entry.contentRect.width))))
    observer.observe(box.current)
    return () => observer.disconnect()
  }, [])
  const legend = html`<div class="legend">
    ${layers.map(([name]) => html`<span><i style=${{ background: partitionColors[name] }}></i>${name}</span>`)}
    <span><i class="dash"></i>context window${series?.budgetSource ? ` (${series.budgetSource})` : ""}</span>
    ${
      series?.compaction === undefined || series.compaction.none !== undefined
        ? html`<span data-testid="compaction-legend">compaction thresholds: ${series?.compaction?.none ?? "…"}</span>`
        : html`<span data-testid="compaction-legend"><i class="compaction"></i>compaction budget and thresholds (turn policy at v${series.compaction.version})</span>`
    }
    <span class="m-compaction">◆ compaction</span><span class="m-seam">▲ seam</span><span class="m-decision">○ decided not to compact</span>
    <span><i class="sel"></i>selected</span>
  </div>`
  if (series === null || series.points.length === 0) {
    return html`<section class="chart" ref=${box}><h3>Window tokens per partition</h3>${legend}
      <div data-testid="chart" data-points="0">no points</div></section>`
  }
  const height = 180
  // Top margin: a row for the selected version's label, then a row for the compaction and seam glyphs.
  const m = { top: 32, right: 24, bottom: 36, left: 58 }
  const points = series.points
  const versions = [...points.map((p) => p.version), ...series.marks.map((mark) => mark.version), series.head]
  const x0 = Math.min(...versions)
  const x1 = Math.max(x0 + 1, ...versions)
  const maxTotal = Math.max(...points.map((p) => layers.reduce((t, [, pick]) => t + pick(p.tokens), 0)))
  const compactionBudget = series.compaction?.budget ?? 0
  const yMax = Math.max(series.budget ?? 0, compactionBudget, maxTotal, 10)
  const yTicks = ticks(0, yMax * 1.12, 4)
  // The top of the scale: the last tick, or above it when a line would sit over the plot's top.
  const y1 = Math.max(yTicks.at(-1), yMax * 1.08)
  const plotW = width - m.left - m.right
  const plotH = height - m.top - m.bottom
  const X = (v) => m.left + ((v - x0) / (x1 - x0)) * plotW
  const Y = (t) => m.top + plotH - (t / y1) * plotH
  // Stacked areas: each layer between the running sum below it and the running sum with it.
  let below = points.map(() => 0)
  const areas = layers.map(([name, pick]) => {
    const above = below.map((value, i) => value + pick(points[i].tokens))
    const top = points.map((p, i) => `${X(p.version).toFixed(1)},${Y(above[i]).toFixed(1)}`)
    const bottom = points.map((p, i) => `${X(p.version).toFixed(1)},${Y(below[i]).toFixed(1)}`).reverse()
    below = above
    return { name, d: `M${top.join("L")}L${bottom.join("L")}Z` }
  })
  const xTicks = ticks(x0, x1, Math.max(2, Math.floor(plotW / 90))).filter((t) => Number.isInteger(t))
  const last = points.filter((p) => p.version <= selected).at(-1)
  const selX = X(Math.min(Math.max(selected, x0), x1))
  // One version in the label: the selected one, with its window's tokens (the window pane's number).
  const selLabel = `v${selected}${windowTotal === null ? "" : ` · ${windowTotal} tokens in the window`}`
  // The label sits right of the line, or left of it when it would run past the plot.
  const selRight = selX + 6 + selLabel.length * 6.5 < width - m.right
  const pick = (event) => {
    const rect = event.currentTarget.getBoundingClientRect()
    const v = Math.round(x0 + ((event.clientX - rect.left - m.left) / plotW) * (x1 - x0))
    onSelect(Math.min(series.head, Math.max(1, v)))
  }
  return html`<section class="chart" ref=${box}>
    <h3>Window tokens per partition <small>${points.length} ${series.pointsFrom === "events" ? "events (no render recorded)" : "renders"} · v${x0}–v${x1}</small></h3>
    ${legend}
    <svg
      data-testid="chart"
      data-points=${points.length}
      data-budget=${series.budget ?? ""}
      data-total-at-selected=${last?.tokens.total ?? ""}
      data-window-total=${windowTotal ?? ""}
      width=${width}
      height=${height}
      viewBox=${`0 0 ${width} ${height}`}
      role="img"
      aria-label="window tokens per partition over versions"
      onClick=${pick}
    >
      ${yTicks.map(
        (t) => html`<g class="tick">
          <line x1=${m.left} x2=${width - m.right} y1=${Y(t)} y2=${Y(t)} class="grid" />
          <text data-testid="axis-label" x=${m.left - 6} y=${Y(t) + 4} text-anchor="end">${short(t)}</text>
        </g>`
      )}
      ${xTicks.map(
        (t) =>
          html`<text data-testid="axis-label" x=${X(t)} y=${height - m.bottom + 14} text-anchor="middle">${t}</text>`
      )}
      <text data-testid="axis-label" class="title" x=${m.left + plotW / 2} y=${height - 4} text-anchor="middle">version</text>
      <text data-testid="axis-label" class="title" x=${12} y=${m.top + plotH / 2} text-anchor="middle"
        transform=${`rotate(-90 12 ${m.top + plotH / 2})`}>tokens</text>
      ${areas.map((a) => html`<path data-testid="chart-area" data-partition=${a.name} d=${a.d} fill=${partitionColors[a.name]} fill-opacity="0.8" />`)}
      <line x1=${m.left} x2=${m.left} y1=${m.top} y2=${m.top + plotH} class="axis" />
      <line x1=${m.left} x2=${width - m.right} y1=${m.top + plotH} y2=${m.top + plotH} class="axis" />
      ${series.marks.map(
        (
          mark
        ) => html`<g data-testid="chart-marker" data-kind=${mark.mark} data-version=${mark.version} data-type=${mark.type}>
          <title>v${mark.version} ${mark.type}</title>
          <line x1=${X(mark.version)} x2=${X(mark.version)} y1=${m.top} y2=${m.top + plotH} stroke=${markColors[mark.mark]} stroke-width="1" stroke-opacity="0.7" />
          ${
            mark.mark === "compaction"
              ? html`<path d=${`M${X(mark.version)},${m.top - 8}l4,4l-4,4l-4,-4z`} fill=${markColors.compaction} />`
              : html`<path d=${`M${X(mark.version)},${m.top - 8}l4,7h-8z`} fill=${markColors.seam} />`
          }
        </g>`
      )}
      ${(series.decisions ?? []).map(
        (decision) => html`<g data-testid="chart-decision" data-version=${decision.version}>
          <title>v${decision.version} decided not to compact: ${decision.summary}</title>
          <circle cx=${X(decision.version)} cy=${m.top + plotH - 3} r="2.5" fill="none" stroke=${markColors.decision} stroke-width="1" />
        </g>`
      )}
      ${
        series.budget === null
          ? null
          : html`<g data-testid="chart-budget" data-value=${series.budget} data-y=${Y(series.budget).toFixed(1)}>
              <line x1=${m.left} x2=${width - m.right} y1=${Y(series.budget)} y2=${Y(series.budget)} class="budget" />
              <text x=${m.left + 6} y=${Y(series.budget) + 13} text-anchor="start" class="budget-label">window ${series.budget}</text>
            </g>`
      }
      <${CompactionLines} compaction=${series.compaction} Y=${Y} left=${m.left} right=${width - m.right} />
      <g data-testid="chart-selected" data-version=${selected} data-x=${selX.toFixed(1)}>
        <line x1=${selX} x2=${selX} y1=${4} y2=${m.top + plotH} class="selected" />
        <text x=${selRight ? selX + 6 : selX - 6} y=${13} text-anchor=${selRight ? "start" : "end"} class="selected-label">${selLabel}</text>
      </g>
    </svg>
  </section>`
}

// The window, the message pane, diff and render --------------------------------------------------

const blameText = (b) =>
  b === undefined
    ? ""
    : `${b.addedBy.action} by v${b.addedBy.version} ${b.addedBy.type}${b.lastChangedBy === null ? "" : `; ${b.lastChangedBy.action} by v${b.lastChangedBy.version} ${b.lastChangedBy.type}`}`

function MessageRows({ title, rows, blame, budget, openId, onOpen }) {
  const total = rows.reduce((t, r) => t + r.tokens, 0)
  return html`<div class="partition" data-testid=${`partition-${title}`} data-tokens=${total}>
    <h4>${title} <small>${total} tokens · ${rows.length} messages</small></h4>
    ${rows.map((r) => {
      const why = blameText(blame.get(r.id))
      const width = budget ? Math.max(1, Math.round((r.tokens / budget) * 60)) : Math.min(60, r.tokens / 20)
      return html`<button type="button" class=${`message ${r.id === openId ? "open" : ""}`} data-testid="message" data-id=${r.id}
        data-tokens=${r.tokens} data-blame=${why} title=${why} onClick=${() => onOpen(r.id)}>
        <span class="barbox"><span class="bar" style=${{ width: `${width}px`, background: partitionColors[title] ?? "#999" }}></span></span>
        <span class="tokens">${r.tokens}</span>
        <span class="role">${r.role}${r.kind === "chat" ? "" : ` · ${r.kind}`}${r.pinned ? " · pinned" : ""}${r.seamLevel === null ? "" : ` · seam ${r.seamLevel}`}</span>
        <span class="preview">${r.preview}</span>
      </button>`
    })}
  </div>`
}

function WindowView({ data, openId, onOpen }) {
  if (data === null) return html`<section class="window">loading…</section>`
  const blame = new Map(data.blame.messages.map((m) => [m.id, m]))
  const { window, usage } = data
  return html`<section class="window" data-testid="window" data-version=${window.version} data-total=${window.tokens.total}>
    <h3>Window at v${window.version} <small>${window.tokens.total} tokens${usage.budget === null ? "" : ` of ${usage.budget}`}</small></h3>
    <table class="usage" data-testid="usage">
      ${usage.lines.map(
        (line) => html`<tr data-testid="usage-line" data-name=${line.name} data-tokens=${line.tokens}>
          <td>${line.name}</td><td class="num">${line.tokens}</td><td class="num">${usage.budget === null ? "" : `${line.percent}%`}</td>
        </tr>`
      )}
      <tr><td>free</td><td class="num">${usage.free ?? "-"}</td><td></td></tr>
    </table>
    <${MessageRows} title="system" rows=${window.system} blame=${blame} budget=${usage.budget} openId=${openId} onOpen=${onOpen} />
    <${MessageRows} title="knowledge" rows=${window.knowledge} blame=${blame} budget=${usage.budget} openId=${openId} onOpen=${onOpen} />
    <div class="partition"><h4>task state <small>${window.taskState.tokens} tokens</small></h4>
      <div class="goal">${window.taskState.goal ?? "no goal"}</div>
      ${window.taskState.subgoals.map((s) => html`<div class="subgoal">· ${s}</div>`)}
      ${window.signals.map((s) => html`<div class="signal">signal: ${s.text}</div>`)}
    </div>
    <${MessageRows} title="history" rows=${window.history} blame=${blame} budget=${usage.budget} openId=${openId} onOpen=${onOpen} />
  </section>`
}

const touchText = (touch) => `${touch.action} by v${touch.version} ${touch.type} (event ${touch.eventId})`

function PartView({ part }) {
  switch (part.type) {
    case "text":
      return html`<div class="part"><div class="part-kind">text</div><pre class="full" data-testid="message-text">${part.text}</pre></div>`
    case "tool_call":
      return html`<div class="part"><div class="part-kind">tool call <code>${part.name}</code> <small>${part.id}</small></div>
        <pre class="full" data-testid="message-text">${part.input}</pre></div>`
    case "tool_result":
      return html`<div class="part"><div class="part-kind">tool result <small>${part.toolCallId}</small>${part.isError ? html` <span class="del">error</span>` : null}</div>
        <pre class="full" data-testid="message-text">${part.content}</pre></div>`
    case "reasoning":
      return html`<div class="part"><div class="part-kind">reasoning${part.opaque ? " (with opaque provider data)" : ""}</div>
        <pre class="full" data-testid="message-text">${part.text === "" ? "(redacted)" : part.text}</pre></div>`
    default:
      return html`<div class="part"><div class="part-kind">${part.type}</div>
        <div class="media">${part.source}${part.bytes === null ? "" : ` · ${part.bytes} bytes`}${part.detail === null ? "" : ` · ${part.detail}`}</div></div>`
  }
}

function MessagePane({ id, state, onOpen, onClose }) {
  // Until the answer for this id arrives, the last answer is another message's: show neither.
  const detail = state.data !== null && state.data.id === id ? state.data : null
  return html`<aside class="message-pane" data-testid="message-pane" data-id=${id} aria-label="message">
    <div class="pane-head">
      <h3>Message <code>${id}</code></h3>
      <button type="button" data-testid="message-close" title="close" onClick=${onClose}>×</button>
    </div>
    ${state.error !== null ? html`<div class="del" data-testid="message-error">${state.error}</div>` : null}
    ${
      detail === null
        ? state.error === null
          ? html`<div>loading…</div>`
          : null
        : html`<table class="meta">
              <tr><td>role</td><td data-testid="message-role">${detail.role}${detail.kind === "chat" ? "" : ` · ${detail.kind}`}${detail.pinned ? " · pinned" : ""}</td></tr>
              <tr><td>partition</td><td>${detail.partition} at v${detail.version}</td></tr>
              <tr><td>tokens</td><td data-testid="message-tokens" data-tokens=${detail.tokens}>${detail.tokens}</td></tr>
              <tr><td>origin</td><td data-testid="message-origin">${detail.addedBy === null ? "unknown" : touchText(detail.addedBy)}</td></tr>
              ${detail.lastChangedBy === null ? null : html`<tr><td>changed</td><td data-testid="message-changed">${touchText(detail.lastChangedBy)}</td></tr>`}
            </table>
            ${
              detail.toolPairs.length === 0
                ? null
                : html`<div class="pairs" data-testid="tool-pairs">
                    <h4>Tool pair</h4>
                    ${detail.toolPairs.map(
                      (pair) => html`<div class="pair" data-testid="tool-pair" data-call-id=${pair.toolCallId}
                          data-call=${pair.call?.messageId ?? ""} data-result=${pair.result?.messageId ?? ""}>
                        <code>${pair.name ?? "?"}</code> <small>${pair.toolCallId}</small>
                        <div>call: ${
                          pair.call === null
                            ? "not in the window"
                            : html`<button type="button" class="link" data-testid="pair-call" onClick=${() => onOpen(pair.call.messageId)}>${pair.call.messageId}</button> ${pair.call.preview}`
                        }</div>
                        <div>result: ${
                          pair.result === null
                            ? "not in the window"
                            : html`<button type="button" class="link" data-testid="pair-result" onClick=${() => onOpen(pair.result.messageId)}>${pair.result.messageId}</button> ${pair.result.preview}`
                        }</div>
                      </div>`
                    )}
                  </div>`
            }
            <h4>Content</h4>
            ${detail.parts.map((part) => html`<${PartView} part=${part} />`)}`
    }
  </aside>`
}

function DiffView({ state }) {
  const diff = state.data
  if (state.error !== null) return html`<div class="del">${state.error}</div>`
  if (diff === null) return html`<section class="diff">loading…</section>`
  return html`<section class="diff" data-testid="diff" data-from=${diff.from} data-to=${diff.to} data-added=${diff.added.length} data-removed=${diff.removed.length} data-changed=${diff.changed.length}>
    <h3>Diff v${diff.from} → v${diff.to} <small>+${diff.added.length} −${diff.removed.length} ~${diff.changed.length}</small></h3>
    ${diff.added.map((r) => html`<div class="add">+ ${r.partition} ${r.tokens} ${r.preview}</div>`)}
    ${diff.removed.map((r) => html`<div class="del">− ${r.partition} ${r.tokens} ${r.preview}</div>`)}
    ${diff.changed.map((r) => html`<div class="chg">~ ${r.partition} ${r.tokensBefore} → ${r.tokensAfter} ${r.after}</div>`)}
    ${diff.added.length + diff.removed.length + diff.changed.length === 0 ? html`<div>no message changed</div>` : null}
  </section>`
}

function RenderView({ stream, version }) {
  const [state, setState] = useState(null)
  // Opened (a tab click or a `view=render` deep link) or moved to another version: rebuild and verify
  // at once; a late answer for another version is dropped. The button does it again.
  const [round, setRound] = useState(0)
  useEffect(() => {
    let live = true
    setState(null)
    api(stream, "render", { at: version })
      .then((data) => live && setState(data))
      .catch((error) => live && setState({ error: error.message }))
    return () => {
      live = false
    }
  }, [stream, version, round])
  return html`<section class="render" data-testid="render" data-version=${version}>
    <h3>Rendered request at or before v${version} <button type="button" data-testid="render-again" onClick=${() => setRound((n) => n + 1)}>rebuild and verify again</button></h3>
    ${
      state === null
        ? html`<div data-testid="render-loading">rebuilding…</div>`
        : state.error !== undefined
          ? html`<div class="del" data-testid="render-error">${state.error}</div>`
          : html`<div data-testid="render-status" data-verified=${state.verified ? "true" : "false"} data-at=${state.version} class=${state.verified ? "add" : "del"}>
                v${state.version} ${state.provider}/${state.model}: ${state.verified ? `verified sha256 ${state.sha256}` : `MISMATCH ${state.problem}`}
              </div>
              ${state.body === null ? null : html`<pre>${JSON.stringify(JSON.parse(state.body), null, 2)}</pre>`}`
    }
  </section>`
}

// The page -----------------------------------------------------------------------------------------

// The Restore button on a selected compaction: confirm, post, show what came back or the refusal.
function RestorePanel({ stream, row, onRestored }) {
  const [state, setState] = useState(null)
  useEffect(() => setState(null), [stream, row?.eventId])
  if (row === undefined || row.type !== "Compacted") return null
  const restore = () => {
    if (
      !window.confirm(
        `Undo compaction ${row.eventId} (v${row.version})? Its summary leaves the window and the messages it replaced come back, as a CompactionReverted event.`
      )
    )
      return
    setState({ busy: true })
    post(`/api/streams/${encodeURIComponent(stream)}/restore`, { compaction: row.eventId })
      .then((restored) => {
        setState(null)
        onRestored(restored)
      })
      .catch((e) => setState({ error: e.message, tag: e.tag }))
  }
  return html`<div class="restore" data-testid="restore-panel">
    <button type="button" data-testid="restore" disabled=${state?.busy === true} title="undo this compaction (ctxlog restore)" onClick=${restore}>Restore</button>
    ${state?.error === undefined ? null : html`<span class="del" role="alert" data-testid="restore-error" data-tag=${state.tag ?? ""}>${state.error}</span>`}
  </div>`
}

function App() {
  const [place, navigate] = usePlace()
  const [streams, setStreams] = useState([])
  const [head, setHead] = useState(null)
  // The stream of the URL is not in the log (or its head cannot be read): said in place of the panes.
  const [headError, setHeadError] = useState(null)
  const [follow, setFollow] = useState(false)
  const [error, setError] = useState(null)
  const [query, setQuery] = useState(place.q)
  // What the last restore did (shown above the panes until another stream is picked).
  const [restored, setRestored] = useState(null)
  const stream = place.stream
  useEffect(() => setRestored(null), [stream])
  const selected = place.v ?? head

  useEffect(() => {
    get("/api/streams")
      .then((all) => {
        // Newest first: the stream last written to is the one most likely wanted.
        const list = [...all].sort((a, b) => b.lastActivity - a.lastActivity || a.stream.localeCompare(b.stream))
        setStreams(list)
        if (readLocation().stream === null && list.length > 0) navigate({ stream: list[0].stream }, true)
      })
      .catch((e) => setError(e.message))
  }, [])

  // The head, polled: new events reload the timeline and chart, and move the selection when following.
  useEffect(() => {
    if (stream === null) return
    setHead(null)
    setHeadError(null)
    let live = true
    let timer
    const poll = () =>
      api(stream, "head")
        .then((h) => live && setHead(h.version))
        .catch((e) => {
          if (!live) return
          // No head, nothing to load: stop asking, and say so where the panes would be.
          clearInterval(timer)
          setHeadError(e.message)
        })
    poll()
    timer = setInterval(poll, 1000)
    return () => {
      live = false
      clearInterval(timer)
    }
  }, [stream])
  useEffect(() => {
    if (follow && place.v !== null) navigate({ v: null }, true)
  }, [follow, head])
  useEffect(() => setQuery(place.q), [place.q])

  const events = useFetch(() => (stream === null || head === null ? null : api(stream, "events")), [stream, head])
  const series = useFetch(() => (stream === null || head === null ? null : api(stream, "series")), [stream, head])
  const search = useFetch(
    () => (stream === null || head === null || place.q === "" ? null : api(stream, "search", { q: place.q })),
    [stream, head, place.q]
  )
  const windowData = useFetch(
    () => (stream === null || selected === null ? null : api(stream, "window", { at: selected })),
    [stream, selected]
  )
  const diff = useFetch(
    () =>
      stream === null || selected === null || place.view !== "diff"
        ? null
        : api(stream, "diff", { from: Math.max(0, selected - 1), to: selected }),
    [stream, selected, place.view]
  )
  const message = useFetch(
    () =>
      stream === null || selected === null || place.msg === null
        ? null
        : api(stream, "message", { at: selected, id: place.msg }),
    [stream, selected, place.msg]
  )

  // A short id in the URL (as `ctxlog window` prints it: `…9fd9c77296f2`) becomes the whole id the
  // server found for it, so the pane and the window's highlight agree.
  useEffect(() => {
    const found = message.data
    if (found === null || place.msg === null || found.id === place.msg) return
    const ref = place.msg.replace(/^…/, "")
    if (ref.length > 0 && (found.id.startsWith(ref) || found.id.endsWith(ref))) navigate({ msg: found.id }, true)
  }, [message.data])

  const all = events.data ?? []
  const types = useMemo(() => [...new Set(all.map((e) => e.type))].sort(), [all])
  const snippets = useMemo(
    () => (search.data === null ? null : new Map(search.data.hits.map((hit) => [hit.version, hit.snippet]))),
    [search.data]
  )
  const rows = useMemo(
    () =>
      all.filter((e) => (place.type === "" || e.type === place.type) && (snippets === null || snippets.has(e.version))),
    [all, place.type, snippets]
  )
  const select = (v) => {
    setFollow(false)
    navigate({ v })
  }
  const step = (delta) => {
    if (selected === null || head === null) return
    select(Math.min(head, Math.max(1, selected + delta)))
  }
  const submitSearch = (event) => {
    event.preventDefault()
    navigate({ q: query.trim() })
  }

  return html`<div class="app">
    <header class="top" data-testid="header">
      <strong class="brand">ctxlog</strong>
      <span class="stream-name" title=${stream ?? ""}>${stream ?? "no stream"}</span>
      <span class="nav">
        <button type="button" data-testid="prev" title="previous version" onClick=${() => step(-1)}>◀</button>
        <label>v <input data-testid="version-input" type="number" min="1" max=${head ?? 0} value=${selected ?? ""}
          onChange=${(e) => select(Number(e.currentTarget.value))} /></label>
        <button type="button" data-testid="next" title="next version" onClick=${() => step(1)}>▶</button>
        <span class="muted">of ${head ?? "…"}</span>
      </span>
      <label class="follow"><input type="checkbox" checked=${follow} onChange=${(e) => setFollow(e.currentTarget.checked)} /> follow live</label>
      <select data-testid="type-filter" aria-label="event type" onChange=${(e) => navigate({ type: e.currentTarget.value }, true)}>
        <option value="" selected=${place.type === ""}>all event types</option>
        ${types.map((t) => html`<option value=${t} selected=${t === place.type}>${t}</option>`)}
      </select>
      <form class="search" onSubmit=${submitSearch} role="search">
        <input data-testid="search" type="search" placeholder="search content" value=${query}
          onInput=${(e) => setQuery(e.currentTarget.value)} />
        ${place.q === "" ? null : html`<button type="button" title="clear search" onClick=${() => navigate({ q: "" })}>clear</button>`}
      </form>
      ${search.data === null ? null : html`<span class="muted" data-testid="search-count" data-total=${search.data.total}>${search.data.total} events match</span>`}
    </header>
    ${error === null ? null : html`<div class="del banner">${error}</div>`}
    <div class="body">
      <${StreamList} streams=${streams} selected=${stream} onSelect=${(s) => navigate({ stream: s, v: null, msg: null, q: "", type: "" })} />
      <main>
        ${
          headError === null
            ? null
            : html`<section class="stream-error del" data-testid="stream-error" role="alert">
                <strong>${headError}</strong>
                <p>${streams.length === 0 ? "This log holds no streams." : "Pick one of the streams on the left."}</p>
              </section>`
        }
        ${
          headError !== null
            ? null
            : html`<div class="charts"><${Chart} series=${series.data} selected=${selected ?? 0} onSelect=${select}
                windowTotal=${windowData.data !== null && windowData.data.window.version === selected ? windowData.data.window.tokens.total : null} />
              <${CacheLane} stream=${stream} head=${head} series=${series.data} selected=${selected} onSelect=${select} />
              <${Compare} stream=${stream} /></div>`
        }
        ${
          headError !== null
            ? null
            : html`<div class=${`columns ${place.msg === null ? "" : "with-message"}`}>
          <${Timeline} rows=${rows} selected=${selected} onSelect=${select} snippets=${snippets} />
          <div class="detail" data-testid="detail">
            ${
              restored === null
                ? null
                : html`<div class="ins" data-testid="restore-result" data-version=${restored.version}>restored compaction ${restored.compactionEventId}: ${restored.restored.length} message(s) back (CompactionReverted ${restored.revertEventId}, v${restored.version})</div>`
            }
            <${RestorePanel} stream=${stream} row=${all.find((e) => e.version === selected)}
              onRestored=${(done) => {
                setRestored(done)
                setHead(done.version)
                navigate({ v: done.version })
              }} />
            <nav class="tabs" aria-label="view">
              ${views.map(
                (
                  view
                ) => html`<button type="button" data-testid=${`tab-${view}`} class=${place.view === view ? "active" : ""}
                  aria-pressed=${place.view === view ? "true" : "false"} onClick=${() => navigate({ view })}>${view}</button>`
              )}
            </nav>
            ${place.view === "window" ? html`<${WindowView} data=${windowData.data} openId=${place.msg} onOpen=${(msg) => navigate({ msg })} />` : null}
            ${place.view === "diff" ? html`<${DiffView} state=${diff} />` : null}
            ${place.view === "render" && stream !== null && selected !== null ? html`<${RenderView} stream=${stream} version=${selected} />` : null}
            ${windowData.error === null ? null : html`<div class="del">${windowData.error}</div>`}
          </div>
          ${
            place.msg === null
              ? null
              : html`<${MessagePane} id=${place.msg} state=${message} onOpen=${(msg) => navigate({ msg })} onClose=${() => navigate({ msg: null })} />`
          }
        </div>`
        }
      </main>
    </div>
  </div>`
}

render(html`<${App} />`, document.getElementById("app"))
