// Boot cost against the number of declared models (issue 46: "boot linear in
// models"). Per size: one process boots a fresh embedded PostgreSQL with N
// generated models (test/helpers/many-models.ts: three fields, an indexed
// field, a compound index and a class-level permission each), then fresh
// processes boot again on that database with the same declarations. Each warm
// boot is measured in its own process (test/helpers/many-models-node.ts): the
// CPU it spends in register + ready, and the statements Parse's pool sends,
// full `_SCHEMA` reads and `_SCHEMA` writes named apart.
//
// `npx tsx test/bench/boot-models.ts [sizes=10,200] [repeats=3]` prints a table,
// the warm-boot CPU ratio of the largest size to the smallest, and the targets
// (≤ 2×; no `_SCHEMA` write on a warm boot). `npm run bench` runs it with the
// scale part (10 and 200 models) and adds the table to latest.md.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { tempDir } from '../helpers/kit.js'
import { forkManyModelsBoot, type ManyModelsBoot } from '../helpers/many-models.js'

/** Issue 46: warm boot CPU at the largest size at most this many times the smallest's. */
export const BOOT_CPU_RATIO_TARGET = 2

function bootChild (models: number, dataDir: string): Promise<ManyModelsBoot> {
  // An embedded PostgreSQL in dataDir, whatever DATABASE_URI the shell has.
  return forkManyModelsBoot([String(models), '1'], { KIT_DATA_DIR: dataDir, DATABASE_URI: '' }, `boot with ${models} models`)
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export interface BootModelsResult {
  sizes: Array<{ models: number, cold: ManyModelsBoot, warm: ManyModelsBoot[] }>
  /** Median warm-boot CPU of the largest size ÷ that of the smallest. */
  cpuRatio: number
}

/** Per size: a cold boot on a fresh database, then `repeats` warm boots on it, each in its own process. */
export async function measureBootModels (sizes: number[], repeats: number, log: (line: string) => void = console.log): Promise<BootModelsResult> {
  const result: BootModelsResult = { sizes: [], cpuRatio: NaN }
  const line = (what: string, sample: ManyModelsBoot) => `boot-models: ${String(sample.models).padStart(4)} models  ${what}  cpu ${sample.cpuMs.toFixed(0)} ms  wall ${sample.wallMs.toFixed(0)} ms  ` +
    `statements ${sample.boot.total} (_SCHEMA reads ${sample.boot.schemaReads}, writes ${sample.boot.schemaWrites})`
  for (const models of sizes) {
    const dataDir = path.join(tempDir('fpk-bench-models-'), 'postgres')
    const cold = await bootChild(models, dataDir)
    log(line('cold', cold))
    const warm: ManyModelsBoot[] = []
    for (let i = 0; i < repeats; i++) {
      const sample = await bootChild(models, dataDir)
      warm.push(sample)
      log(line('warm', sample))
    }
    result.sizes.push({ models, cold, warm })
  }
  const cpu = (entry: BootModelsResult['sizes'][number]) => median(entry.warm.map((sample) => sample.cpuMs))
  result.cpuRatio = cpu(result.sizes[result.sizes.length - 1]) / cpu(result.sizes[0])
  return result
}

/** The result as a Markdown table with the targets. */
export function formatBootModels (result: BootModelsResult): string {
  const lines = ['| models | warm boot CPU (median) | wall | statements | full `_SCHEMA` reads | `_SCHEMA` writes |', '|---:|---:|---:|---:|---:|---:|']
  for (const { models, warm } of result.sizes) {
    const pick = (get: (sample: ManyModelsBoot) => number) => median(warm.map(get))
    lines.push(`| ${models} | ${pick((s) => s.cpuMs).toFixed(0)} ms | ${pick((s) => s.wallMs).toFixed(0)} ms | ${pick((s) => s.boot.total)} | ${pick((s) => s.boot.schemaReads)} | ${pick((s) => s.boot.schemaWrites)} |`)
  }
  const first = result.sizes[0].models
  const last = result.sizes[result.sizes.length - 1].models
  const writes = Math.max(...result.sizes.flatMap((entry) => entry.warm.map((sample) => sample.boot.schemaWrites)))
  lines.push('', `Warm boot CPU, ${last} ÷ ${first} models: ×${result.cpuRatio.toFixed(2)} (target ≤ ×${BOOT_CPU_RATIO_TARGET}: ${result.cpuRatio <= BOOT_CPU_RATIO_TARGET ? 'met' : 'missed'}); ` +
    `\`_SCHEMA\` writes per warm boot: ${writes} (target 0: ${writes === 0 ? 'met' : 'missed'}).`)
  return lines.join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [sizes = '10,200', repeats = '3'] = process.argv.slice(2)
  console.log(formatBootModels(await measureBootModels(sizes.split(',').map(Number), Number(repeats))))
  process.exit(0)
}
