// V8's young generation after the idle collection. The memory-reducing
// collection shrinks it to its minimum (the bench server's: 32 → 0.3 MB), and
// V8 grows it back only by doubling, one step each time as many bytes as it
// holds have survived a scavenge: light requests (much allocated, little kept)
// left it at 8 MB after 20,000 of them, paying for four times as many
// scavenges. The step is V8's --semi-space-growth-factor, read at each growth:
// raised on the first request after the collection, the first growth takes the
// young generation straight back to its size before it; put back once there.
// A quiet server is left alone, its young generation small.
import v8 from 'node:v8'

const FACTOR = /^--semi[-_]space[-_]growth[-_]factor=(\d+)$/

/** The young generation's capacity now, bytes. */
export function youngGenerationSize (): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0
}

/** The growth factor this process was started with (its flags or NODE_OPTIONS), else V8's default of 2. */
function startingFactor (): number {
  for (const arg of [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]) {
    const match = FACTOR.exec(arg)
    if (match) return Number(match[1])
  }
  return 2
}

export class YoungGenerationRegrowth {
  /** The size to grow back to; 0 when nothing is owed. */
  private target = 0
  private state: 'steady' | 'shrunk' | 'raised' = 'steady'
  private readonly size: () => number

  constructor (size = youngGenerationSize) {
    this.size = size
  }

  /** Just before a collection: the size it may take away (the larger one when a regrowth is still owed). */
  beforeCollection (): void {
    this.target = Math.max(this.target, this.size())
  }

  /** Just after it: owed a regrowth when it shrank. */
  afterCollection (): void {
    if (this.state !== 'raised') this.state = this.size() < this.target ? 'shrunk' : 'steady'
  }

  /** True from a collection that shrank it until the first request after (one comparison on the request path). */
  get owed (): boolean {
    return this.state === 'shrunk'
  }

  /** Work is back: the next growth goes to the size before the collection in one step. */
  raise (): void {
    if (this.state !== 'shrunk') return
    const now = Math.max(1, this.size())
    v8.setFlagsFromString(`--semi-space-growth-factor=${Math.max(2, Math.ceil(this.target / now))}`)
    this.state = 'raised'
  }

  /** On the idle check: once it has grown back, V8's own factor again. True when it did. */
  settle (): boolean {
    if (this.state !== 'raised' || this.size() < this.target) return false
    v8.setFlagsFromString(`--semi-space-growth-factor=${startingFactor()}`)
    this.state = 'steady'
    this.target = 0
    return true
  }
}
