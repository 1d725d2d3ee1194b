// The ctxlog time-travel viewer: preact + htm (no build step for JSX), uPlot for the token chart,
// @tanstack/virtual-core for the event timeline (streams of 100k events stay one screen of rows).
// Bundled into dist/ui/app.js by scripts/bundle-ui.mjs; every number shown comes from the server's
// query API (the same Queries module the CLI prints).
import { elementScroll, observeElementOffset, observeElementRect, Virtualizer } from "@tanstack/virtual-core"
import htm from "htm"
import { h, render } from "preact"
import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import uPlot from "uplot"

const html = htm.bind(h)

const get = async (path) => {
  const response = await fetch(path)
  const body = await response.json()
  if (!response.ok) throw new Error(body.error ?? response.statusText)
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

function StreamList({ streams, selected, onSelect }) {
  return html`<nav class="streams">
    <h2>Streams</h2>
    ${streams.map(
      (s) => html`<button
        data-testid="stream-item"
        data-stream=${s.stream}
        class=${s.stream === selected ? "active" : ""}
        onClick=${() => onSelect(s.stream)}
      >
        <strong>${s.stream}</strong>
        <small>${s.events} events · ${s.tokens} tokens · ${s.compactions} compactions · ${s.seams} seams</small>
      </button>`
    )}
  </nav>`
}

function Timeline({ events, selected, onSelect }) {
  const scroller = useRef(null)
  const [, setTick] = useState(0)
  const virtualizer = useMemo(
    () =>
      new Virtualizer({
        count: 0,
        getScrollElement: () => scroller.current,
        estimateSize: () => 24,
        overscan: 10,
        observeElementRect,
        observeElementOffset,
        scrollToFn: elementScroll,
        onChange: () => setTick((tick) => tick + 1)
      }),
    []
  )
  virtualizer.setOptions({ ...virtualizer.options, count: events.length })
  useEffect(() => virtualizer._didMount(), [virtualizer])
  useEffect(() => virtualizer._willUpdate())
  const items = virtualizer.getVirtualItems()
  return html`<div class="timeline" ref=${scroller} data-testid="timeline" data-count=${events.length}>
    <div style=${{ height: `${virtualizer.getTotalSize()}px`, position: "relative" }}>
      ${items.map((item) => {
        const e = events[item.index]
        return html`<div
          key=${e.version}
          data-testid="event-row"
          data-version=${e.version}
          class=${`event ${e.version === selected ? "selected" : ""} ${e.mark ?? ""}`}
          style=${{ position: "absolute", top: 0, transform: `translateY(${item.start}px)`, height: "24px" }}
          onClick=${() => onSelect(e.version)}
          title=${e.summary}
        >
          <span class="v">${e.version}</span>
          <span class="mark">${e.mark === "compaction" ? "◆" : e.mark === "seam" ? "▲" : ""}</span>
          <span class="type">${e.type}</span>
          <span class="summary">${e.summary}</span>
        </div>`
      })}
    </div>
  </div>`
}

function Chart({ series, selected }) {
  const target = useRef(null)
  const plot = useRef(null)
  useEffect(() => {
    if (target.current === null || series === null) return
    const points = series.points
    const x = points.map((p) => p.version)
    const parts = [
      ["system", (t) => t.system],
      ["knowledge", (t) => t.knowledge],
      ["taskState", (t) => t.taskState + t.signals],
      ["history", (t) => t.history]
    ]
    // Stacked areas: each series is the running sum of the partitions below it.
    const stacked = []
    let running = points.map(() => 0)
    for (const [, pick] of parts) {
      running = running.map((value, i) => value + pick(points[i].tokens))
      stacked.push(running)
    }
    const budget = series.budget === null ? [] : [points.map(() => series.budget)]
    const data = [x, ...stacked.slice().reverse(), ...budget]
    const opts = {
      width: target.current.clientWidth || 600,
      height: 200,
      legend: { show: true },
      scales: { x: { time: false } },
      series: [
        { label: "version" },
        ...parts
          .slice()
          .reverse()
          .map(([name]) => ({ label: name, stroke: partitionColors[name], fill: `${partitionColors[name]}cc` })),
        ...(series.budget === null ? [] : [{ label: "budget", stroke: "#000", dash: [6, 4] }])
      ]
    }
    plot.current?.destroy()
    plot.current = new uPlot(opts, data, target.current)
    return () => plot.current?.destroy()
  }, [series])
  const last = series === null ? null : series.points.filter((p) => p.version <= selected).at(-1)
  return html`<section class="chart">
    <h3>Tokens per partition over versions</h3>
    <div
      ref=${target}
      data-testid="chart"
      data-points=${series === null ? 0 : series.points.length}
      data-budget=${series?.budget ?? ""}
      data-total-at-selected=${last?.tokens.total ?? ""}
    ></div>
  </section>`
}

function MessageRows({ title, rows, blame, budget }) {
  const total = rows.reduce((t, r) => t + r.tokens, 0)
  return html`<div class="partition" data-testid=${`partition-${title}`} data-tokens=${total}>
    <h4>${title} <small>${total} tokens · ${rows.length} messages</small></h4>
    ${rows.map((r) => {
      const b = blame.get(r.id)
      const why =
        b === undefined
          ? ""
          : `${b.addedBy.action} by v${b.addedBy.version} ${b.addedBy.type}${b.lastChangedBy === null ? "" : `; ${b.lastChangedBy.action} by v${b.lastChangedBy.version} ${b.lastChangedBy.type}`}`
      const width = budget ? Math.max(1, Math.round((r.tokens / budget) * 400)) : Math.min(200, r.tokens / 10)
      return html`<div class="message" data-testid="message" data-id=${r.id} data-tokens=${r.tokens} data-blame=${why} title=${why}>
        <span class="bar" style=${{ width: `${width}px`, background: partitionColors[title] ?? "#999" }}></span>
        <span class="tokens">${r.tokens}</span>
        <span class="role">${r.role}${r.kind === "chat" ? "" : ` · ${r.kind}`}${r.pinned ? " · pinned" : ""}</span>
        <span class="preview">${r.preview}</span>
      </div>`
    })}
  </div>`
}

function WindowView({ data }) {
  if (data === null) return html`<section class="window">select a version</section>`
  const blame = new Map(data.blame.messages.map((m) => [m.id, m]))
  const { window, usage } = data
  return html`<section class="window" data-testid="window" data-version=${window.version} data-total=${window.tokens.total}>
    <h3>Window at version ${window.version} <small>(${window.tokens.total} tokens${usage.budget === null ? "" : ` of ${usage.budget}`})</small></h3>
    <table class="usage" data-testid="usage">
      ${usage.lines.map(
        (line) => html`<tr data-testid="usage-line" data-name=${line.name} data-tokens=${line.tokens}>
          <td>${line.name}</td><td class="num">${line.tokens}</td><td class="num">${usage.budget === null ? "" : `${line.percent}%`}</td>
        </tr>`
      )}
      <tr><td>free</td><td class="num">${usage.free ?? "-"}</td><td></td></tr>
    </table>
    <${MessageRows} title="system" rows=${window.system} blame=${blame} budget=${usage.budget} />
    <${MessageRows} title="knowledge" rows=${window.knowledge} blame=${blame} budget=${usage.budget} />
    <div class="partition"><h4>task state <small>${window.taskState.tokens} tokens</small></h4>
      <div>${window.taskState.goal ?? "no goal"}</div>
      ${window.signals.map((s) => html`<div class="signal">signal: ${s.text}</div>`)}
    </div>
    <${MessageRows} title="history" rows=${window.history} blame=${blame} budget=${usage.budget} />
  </section>`
}

function DiffView({ diff }) {
  if (diff === null) return null
  return html`<section class="diff" data-testid="diff" data-added=${diff.added.length} data-removed=${diff.removed.length} data-changed=${diff.changed.length}>
    <h3>Diff ${diff.from} → ${diff.to} <small>+${diff.added.length} −${diff.removed.length} ~${diff.changed.length}</small></h3>
    ${diff.added.map((r) => html`<div class="add">+ ${r.partition} ${r.tokens} ${r.preview}</div>`)}
    ${diff.removed.map((r) => html`<div class="del">− ${r.partition} ${r.tokens} ${r.preview}</div>`)}
    ${diff.changed.map((r) => html`<div class="chg">~ ${r.partition} ${r.tokensBefore} → ${r.tokensAfter} ${r.after}</div>`)}
  </section>`
}

function RenderView({ stream, version }) {
  const [state, setState] = useState(null)
  useEffect(() => setState(null), [stream, version])
  const load = () =>
    api(stream, "render", { at: version })
      .then(setState)
      .catch((error) => setState({ error: error.message }))
  return html`<section class="render" data-testid="render">
    <h3>Rendered request <button onClick=${load}>rebuild and verify</button></h3>
    ${
      state === null
        ? null
        : state.error !== undefined
          ? html`<div class="del">${state.error}</div>`
          : html`<div data-testid="render-status" class=${state.verified ? "add" : "del"}>
                v${state.version} ${state.provider}/${state.model}: ${state.verified ? `verified sha256 ${state.sha256}` : `MISMATCH ${state.problem}`}
              </div>
              <pre>${state.body === null ? "" : JSON.stringify(JSON.parse(state.body), null, 2)}</pre>`
    }
  </section>`
}

function App() {
  const [streams, setStreams] = useState([])
  const [stream, setStream] = useState(null)
  const [events, setEvents] = useState([])
  const [type, setType] = useState("")
  const [version, setVersion] = useState(null)
  const [head, setHead] = useState(0)
  const [follow, setFollow] = useState(false)
  const [series, setSeries] = useState(null)
  const [windowData, setWindowData] = useState(null)
  const [diff, setDiff] = useState(null)
  const [error, setError] = useState(null)

  useEffect(() => {
    get("/api/streams")
      .then((list) => {
        setStreams(list)
        if (list.length > 0) setStream(list[0].stream)
      })
      .catch((e) => setError(e.message))
  }, [])

  useEffect(() => {
    if (stream === null) return
    setVersion(null)
    api(stream, "head").then((h) => {
      setHead(h.version)
      setVersion(h.version)
    })
  }, [stream])

  useEffect(() => {
    if (stream === null) return
    api(stream, "events", type === "" ? {} : { type }).then(setEvents)
    api(stream, "series").then(setSeries)
  }, [stream, type, head])

  useEffect(() => {
    if (stream === null || version === null) return
    api(stream, "window", { at: version })
      .then(setWindowData)
      .catch((e) => setError(e.message))
    api(stream, "diff", { from: Math.max(0, version - 1), to: version }).then(setDiff)
  }, [stream, version])

  // Live tail: poll the head; new events reload the timeline and chart, and move the selection when following.
  useEffect(() => {
    if (stream === null) return
    const timer = setInterval(() => {
      api(stream, "head").then((h) => {
        if (h.version !== head) {
          setHead(h.version)
          if (follow) setVersion(h.version)
        }
      })
    }, 1000)
    return () => clearInterval(timer)
  }, [stream, head, follow])

  const types = [...new Set(events.map((e) => e.type))].sort()
  return html`<div class="layout">
    <${StreamList} streams=${streams} selected=${stream} onSelect=${setStream} />
    <main>
      ${error === null ? null : html`<div class="del">${error}</div>`}
      <header>
        <strong>${stream ?? "no stream"}</strong> head v${head} · selected
        <input data-testid="version-input" type="number" min="0" max=${head} value=${version ?? ""}
          onChange=${(e) => setVersion(Number(e.currentTarget.value))} />
        <label><input type="checkbox" checked=${follow} onChange=${(e) => setFollow(e.currentTarget.checked)} /> follow live</label>
        <select data-testid="type-filter" onChange=${(e) => setType(e.currentTarget.value)}>
          <option value="">all events</option>
          ${types.map((t) => html`<option value=${t} selected=${t === type}>${t}</option>`)}
        </select>
      </header>
      <${Chart} series=${series} selected=${version ?? 0} />
      <div class="columns">
        <${Timeline} events=${events} selected=${version} onSelect=${setVersion} />
        <div class="detail">
          <${WindowView} data=${windowData} />
          <${DiffView} diff=${diff} />
          ${stream === null || version === null ? null : html`<${RenderView} stream=${stream} version=${version} />`}
        </div>
      </div>
    </main>
  </div>`
}

render(html`<${App} />`, document.getElementById("app"))
