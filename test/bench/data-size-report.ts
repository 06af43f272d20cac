// The data-size scenario's results (test/bench/data-size.ts) and their part of
// latest.md: each request's p50 and req/s at every table size, the growth from
// the smallest to the largest size, kit ÷ NestJS at the largest, and issue
// 46's targets.
import type { FillTiming } from './data-fill.js'
import type { IndexBuildResult } from './index-build.js'
import type { FanOutPoint } from './live-query-fanout.js'

/** reqPerSec is null for a run of a fixed number of requests (the first calls of new tokens). */
export interface DataSizeSample { p50Ms: number, p99Ms: number, reqPerSec: number | null, requests: number, non2xx: number, errors: number }

/** One request measured at one table size: medians over the rounds, and the rounds. */
export interface DataSizePoint extends DataSizeSample { rounds: DataSizeSample[] }

export interface DataSizeScenarioResult {
  key: string
  title: string
  request: string
  caller: string
  side: 'kit' | 'nest'
  /** By table size (rows), as a string key; absent where the request could not be made (e.g. no cursor that deep). */
  bySize: Record<string, DataSizePoint | undefined>
  /** Why a size has no figure. */
  missing?: Record<string, string>
}

/** A target: a ratio (×) unless `unit` says milliseconds. */
export interface DataSizeTarget { what: string, measured: number | null, limit: number, atMost: boolean, unit?: 'ms', note?: string }

export interface DataSizeResult {
  sizes: number[]
  settings: { connections: number, seconds: number, rounds: number, freshTokensPerRound: number, cursorDepth: number }
  /** Fill time by size, on each side (rows added to reach that size). */
  fills: Array<{ size: number, kit: FillTiming, nest?: FillTiming }>
  scenarios: DataSizeScenarioResult[]
  targets: DataSizeTarget[]
  /** The reads of the kit's requests at the largest size, with their plans (EXPLAIN (ANALYZE, BUFFERS) on the filled tables). */
  explains?: Array<{ key: string, request: string, statement: string, plan: string }>
  /** Writes during an index build on the largest table, when measured. */
  indexBuild?: IndexBuildResult
  /** A Note event's delivery to LiveQuery subscribers of the role, by size (live-query-fanout.ts); `missing` says why there is none. */
  liveQuery?: { subscribers: number, repetitions: number, spacingMs: number, bySize: Record<string, FanOutPoint | undefined>, missing?: string }
  durationSeconds: number
}

const fmt = (value: number | null | undefined, digits = 0) => value === null || value === undefined || Number.isNaN(value)
  ? 'n/a'
  : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const rows = (size: number) => size >= 1_000_000 && size % 1_000_000 === 0 ? `${size / 1_000_000}M` : size >= 1000 && size % 1000 === 0 ? `${size / 1000}k` : String(size)
const PLAN_LINES = 20
const cell = (text: string) => text.replace(/\|/g, '\\|')

export function dataSizeMarkdown (result: DataSizeResult | undefined): string {
  if (!result) return ''
  const { sizes, settings } = result
  const [small, large] = [sizes[0], sizes[sizes.length - 1]]
  const lines: string[] = []
  const push = (...more: string[]) => lines.push(...more)
  push('## Data size (issue 46)', '')
  push(`\`Note\` and \`_Session\` filled by SQL in Parse's row format to ${sizes.map(rows).join(' and ')} rows each (half the notes public, a quarter owner-only, a quarter readable by the role Editor), ` +
    `the NestJS peer's \`note\` and \`session\` tables with the same rows; autocannon at ${settings.connections} connections, ${settings.seconds} s per run, ` +
    `${settings.rounds} interleaved rounds per size, medians. The first call of a new token sends ${settings.freshTokensPerRound} requests per round, each with a session token never used before. ` +
    `The deep page follows \`next\` cursors (pages of 1000) to row ${fmt(settings.cursorDepth)} before the runs.`, '')
  push(`| request | caller | ${sizes.map((size) => `p50 ms at ${rows(size)}`).join(' | ')} | ${sizes.map((size) => `req/s at ${rows(size)}`).join(' | ')} | p50 growth ${rows(large)} ÷ ${rows(small)} | non-2xx / errors |`)
  push(`|---|---|${sizes.map(() => '---:').join('|')}|${sizes.map(() => '---:').join('|')}|---:|---|`)
  for (const scenario of result.scenarios) {
    const at = (size: number) => scenario.bySize[String(size)]
    const growth = at(large) && at(small) ? at(large)!.p50Ms / at(small)!.p50Ms : null
    const bad = Object.values(scenario.bySize).reduce((sum, point) => sum + (point ? point.non2xx + point.errors : 0), 0)
    push(`| ${cell(scenario.title)} | ${scenario.caller} | ${sizes.map((size) => fmt(at(size)?.p50Ms, 1)).join(' | ')} | ${sizes.map((size) => fmt(at(size)?.reqPerSec)).join(' | ')} | ${growth === null ? 'n/a' : `${fmt(growth, 2)}×`} | ${bad} |`)
  }
  const live = result.liveQuery
  if (live) {
    // Not a request rate: the ms from the save to the first and to the last subscriber's event, medians of the saves.
    const missed = Object.values(live.bySize).reduce((sum, point) => sum + (point?.missed ?? 0), 0)
    for (const which of ['firstMs', 'lastMs'] as const) {
      const at = (size: number) => live.bySize[String(size)]?.[which]
      const growth = at(large) && at(small) ? at(large)! / at(small)! : null
      push(`| LiveQuery \`create\` event (role ACL), ms to the ${which === 'firstMs' ? 'first' : 'last'} of ${live.subscribers} subscribers | a session each (role Editor) | ${sizes.map((size) => fmt(at(size), 1)).join(' | ')} | ${sizes.map(() => '–').join(' | ')} | ${growth === null ? 'n/a' : `${fmt(growth, 2)}×`} | ${missed} missed |`)
    }
  }
  push('')
  if (live?.missing) push(`LiveQuery fan-out n/a: ${live.missing}.`, '')
  else if (live) {
    push(`LiveQuery fan-out: ${live.subscribers} WebSocket clients, each with the session of its own user of the role Editor (their \`_Session\` rows among the filled ones), subscribe to \`Note\`; ` +
      `a note readable by \`role:Editor\` alone is saved through the API ${live.repetitions} times at each size, ${fmt(live.spacingMs / 1000, 1)} s apart (past LiveQuery's 5 s auth cache, so each event resolves every subscriber's session and roles again); medians of the saves.`, '')
  }
  const missing = result.scenarios.flatMap((scenario) => Object.entries(scenario.missing ?? {}).map(([size, why]) => `${scenario.title} at ${rows(Number(size))}: ${why}`))
  if (missing.length > 0) push(`n/a: ${missing.join('; ')}.`, '')
  push('| target (issue 46) | measured | met |', '|---|---:|---|')
  for (const target of result.targets) {
    const met = target.measured === null ? 'n/a' : (target.atMost ? target.measured <= target.limit : target.measured >= target.limit) ? 'met' : '**not met**'
    const unit = target.unit === 'ms' ? ' ms' : '×'
    push(`| ${cell(target.what)} ${target.atMost ? '≤' : '≥'} ${target.limit}${unit} | ${target.measured === null ? 'n/a' : `${fmt(target.measured, target.unit === 'ms' ? 1 : 2)}${unit}`}${target.note ? ` (${target.note})` : ''} | ${met} |`)
  }
  push('')
  const build = result.indexBuild
  if (build) {
    push(`Writes during an index build on the ${rows(build.rows)}-row Note table: createNote sent every ${build.intervalMs} ms (not waiting for the one before) from 1 s before the build to 1 s after it; ` +
      'first the statement the kit\'s boot issues for a newly declared index, then the same index built plain, as before issue 46:', '')
    push('| statement | build ms | writes answered | failed | p50 ms | p99 ms | max ms |', '|---|---:|---:|---:|---:|---:|---:|')
    for (const run of [build.concurrently, build.plain]) {
      push(`| \`${cell(run.statement)}\` | ${fmt(run.buildMs)} | ${run.writes} | ${run.failed} | ${fmt(run.p50Ms, 1)} | ${fmt(run.p99Ms, 1)} | ${fmt(run.maxMs, 1)} |`)
    }
    push('')
  }
  if (result.explains && result.explains.length > 0) {
    push(`Plans at ${rows(large)} rows: each read the kit's requests sent (caught on Parse's pool), replayed under \`EXPLAIN (ANALYZE, BUFFERS)\` (the plan's first ${PLAN_LINES} lines):`, '')
    for (const { request, statement, plan } of result.explains) {
      const lines = plan.split('\n')
      push(`${request}:`, '', '```sql', statement.length > 600 ? `${statement.slice(0, 600)}…` : statement, '```', '', '```text', ...lines.slice(0, PLAN_LINES), ...(lines.length > PLAN_LINES ? ['…'] : []), '```', '')
    }
  }
  push('Fill time (rows added to reach each size; generate_series INSERT … SELECT, then VACUUM (ANALYZE)):', '')
  push('| size | kit Note s | kit _Session s | kit VACUUM s | NestJS note s | NestJS session s | NestJS VACUUM s |', '|---|---:|---:|---:|---:|---:|---:|')
  const s = (ms: number | undefined) => fmt(ms === undefined ? undefined : ms / 1000, 1)
  for (const fill of result.fills) {
    push(`| ${rows(fill.size)} | ${s(fill.kit.notesMs)} | ${s(fill.kit.sessionsMs)} | ${s(fill.kit.vacuumMs)} | ${s(fill.nest?.notesMs)} | ${s(fill.nest?.sessionsMs)} | ${s(fill.nest?.vacuumMs)} |`)
  }
  push('', `The data-size part took ${fmt(result.durationSeconds)} s.`, '')
  return lines.join('\n') + '\n'
}
