// Measuring: every scenario times ctxlog and its reference on identical data in the same process run.
// Each subject gets warm-up operations first, then rounds alternate between the subjects (the order
// flips every round, so drift of the machine hits both alike); a round's figure is its mean time per
// operation, and the table shows the median of the rounds and their spread (p10–p90 of the rounds,
// as a share of the median).

/** One thing being timed: `op(i)` performs operation number `i` (0-based, never repeated). */
export interface Subject {
  readonly name: string
  readonly op: (i: number) => unknown
}

/** Sizes of one comparison. */
export interface Plan {
  readonly warmup: number
  /** Rounds run at least. */
  readonly rounds: number
  /** Operations per round (a round's figure is their mean). */
  readonly perRound: number
  /**
   * Rounds run at most (default: `rounds` × `BENCH_ROUNDS_FACTOR`, 3): past `rounds`, rounds go on while
   * a ratio's spread is over `BENCH_TARGET_SPREAD` (±15%), so a quiet machine reports ratios to that spread.
   */
  readonly maxRounds?: number
}

/** The spread a ratio is measured to (p10–p90 over the median, as a share): `BENCH_TARGET_SPREAD`, 15 (%). */
export const targetSpread = (): number => {
  const raw = Number(process.env.BENCH_TARGET_SPREAD ?? "15")
  return (Number.isFinite(raw) && raw > 0 ? raw : 15) / 100
}

/** The most rounds a comparison planned at `rounds` runs (for scenarios that make their data up front). */
export const roundsAtMost = (rounds: number): number => Math.max(rounds, Math.round(rounds * roundsFactor()))

const roundsFactor = (): number => {
  const raw = Number(process.env.BENCH_ROUNDS_FACTOR ?? "3")
  return Number.isFinite(raw) && raw >= 1 ? raw : 3
}

/** The figures of one subject. */
export interface Figures {
  readonly name: string
  /** Median over rounds of the mean time per operation, in microseconds. */
  readonly medianUs: number
  /** p10 and p90 of the rounds, in microseconds. */
  readonly p10Us: number
  readonly p90Us: number
  readonly rounds: number
  readonly opsPerRound: number
  /**
   * The spread of ctxlog's ratio to this subject, round by round (the first subject over this one in the
   * same round; p10–p90 over the median, in %); undefined for the first subject.
   */
  readonly ratioSpreadPct?: number
}

const quantile = (sorted: ReadonlyArray<number>, q: number): number => {
  if (sorted.length === 0) return Number.NaN
  const position = (sorted.length - 1) * q
  const low = Math.floor(position)
  const high = Math.ceil(position)
  const a = sorted[low] ?? Number.NaN
  const b = sorted[high] ?? a
  return a + (b - a) * (position - low)
}

/** Median, p10 and p90 of a list of samples. */
export const summarize = (samples: ReadonlyArray<number>): { median: number; p10: number; p90: number } => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { median: quantile(sorted, 0.5), p10: quantile(sorted, 0.1), p90: quantile(sorted, 0.9) }
}

/** Time the subjects against each other: warm-up, then alternating rounds. */
export const compare = async (subjects: ReadonlyArray<Subject>, plan: Plan): Promise<ReadonlyArray<Figures>> => {
  // Each subject numbers its own operations 0, 1, 2, ... across warm-up and rounds.
  const state = subjects.map((subject) => ({ subject, next: 0, samples: [] as Array<number> }))
  for (const s of state) {
    for (let k = 0; k < plan.warmup; k++) await s.subject.op(s.next++)
  }
  const ratioSpread = (index: number): number => {
    const first = state[0]?.samples ?? []
    const other = state[index]?.samples ?? []
    const ratios = first.map((a, round) => a / (other[round] ?? Number.NaN)).filter(Number.isFinite)
    const stats = summarize(ratios)
    return stats.median > 0 ? (stats.p90 - stats.p10) / stats.median : Number.POSITIVE_INFINITY
  }
  const maxRounds = Math.max(plan.rounds, plan.maxRounds ?? roundsAtMost(plan.rounds))
  const target = targetSpread()
  let round = 0
  for (; round < maxRounds; round++) {
    if (round >= plan.rounds && state.every((_, index) => index === 0 || ratioSpread(index) <= target)) break
    const order = round % 2 === 1 ? [...state].reverse() : state
    for (const s of order) {
      const started = performance.now()
      for (let k = 0; k < plan.perRound; k++) await s.subject.op(s.next++)
      s.samples.push(((performance.now() - started) * 1000) / plan.perRound)
    }
  }
  const samples = state.map((s) => s.samples)
  return subjects.map((subject, index) => {
    const stats = summarize(samples[index] ?? [])
    const spread = index === 0 ? undefined : ratioSpread(index)
    return {
      name: subject.name,
      medianUs: stats.median,
      p10Us: stats.p10,
      p90Us: stats.p90,
      rounds: round,
      opsPerRound: plan.perRound,
      ...(spread === undefined || !Number.isFinite(spread) ? {} : { ratioSpreadPct: Math.round(spread * 100) })
    }
  })
}

/** One line of the results table. */
export interface Row {
  readonly scenario: string
  readonly size: string
  readonly subject: string
  /** What one operation is (the unit of the median). */
  readonly unit: string
  readonly medianUs: number | null
  readonly spreadPct: number | null
  /** ctxlog's median over this row's median (> 1: the reference is faster); null on ctxlog's own row. */
  readonly ratioVsCtxlog: number | null
  /** The spread of that ratio over the rounds (each round's ctxlog figure over this one's), in %. */
  readonly ratioSpreadPct?: number | null
  /** Rounds timed. */
  readonly rounds?: number
  /** Anything else worth saying (a throughput, a share, why a figure is missing). */
  readonly note: string
  /** RSS of the process after the scenario, in MiB. */
  readonly rssMiB: number
}

const rssMiB = (): number => Math.round(process.memoryUsage().rss / 1048576)

/** Rows of one comparison: the first figures are ctxlog's, the others references. */
export const rows = (
  scenario: string,
  size: string,
  unit: string,
  figures: ReadonlyArray<Figures>,
  notes: Readonly<Record<string, string>> = {}
): ReadonlyArray<Row> => {
  const ctxlog = figures[0]
  return figures.map((f, index) => ({
    scenario,
    size,
    subject: f.name,
    unit,
    medianUs: round(f.medianUs),
    spreadPct: f.medianUs > 0 ? Math.round(((f.p90Us - f.p10Us) / f.medianUs) * 100) : null,
    ratioVsCtxlog: index === 0 || ctxlog === undefined || f.medianUs <= 0 ? null : round(ctxlog.medianUs / f.medianUs),
    ratioSpreadPct: f.ratioSpreadPct ?? null,
    rounds: f.rounds,
    note: notes[f.name] ?? "",
    rssMiB: rssMiB()
  }))
}

/** A row that carries a note instead of a timing (a skipped size, a share, a count). */
export const noteRow = (scenario: string, size: string, subject: string, note: string): Row => ({
  scenario,
  size,
  subject,
  unit: "",
  medianUs: null,
  spreadPct: null,
  ratioVsCtxlog: null,
  note,
  rssMiB: rssMiB()
})

const round = (value: number): number => (Number.isFinite(value) ? Math.round(value * 100) / 100 : value)

const formatUs = (us: number | null): string => {
  if (us === null || !Number.isFinite(us)) return ""
  if (us >= 1_000_000) return `${(us / 1_000_000).toFixed(2)} s`
  if (us >= 1000) return `${(us / 1000).toFixed(2)} ms`
  return `${us.toFixed(1)} µs`
}

/** The table as Markdown. */
export const table = (all: ReadonlyArray<Row>): string => {
  const header =
    "| scenario | size | subject | per | median | spread | ctxlog / this | ratio spread | rounds | RSS MiB | note |"
  const rule = "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|"
  const lines = all.map(
    (r) =>
      `| ${r.scenario} | ${r.size} | ${r.subject} | ${r.unit} | ${formatUs(r.medianUs)} | ${
        r.spreadPct === null ? "" : `±${r.spreadPct}%`
      } | ${r.ratioVsCtxlog === null ? "" : `${r.ratioVsCtxlog}x`} | ${
        r.ratioSpreadPct == null ? "" : `±${r.ratioSpreadPct}%`
      } | ${r.rounds ?? ""} | ${r.rssMiB} | ${r.note} |`
  )
  return [header, rule, ...lines].join("\n")
}
