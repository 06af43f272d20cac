// The IPC side of a benchmarked server process (server.ts for the kit,
// nest-server.ts for the NestJS peer): the runner's commands answered alike,
// and the server closed when the runner goes away.
import { PhaseProfiler } from './profiler.js'
import { heapSummary } from './heap-summary.js'
import { memorySample, type Command, type Reply } from './shared.js'

export interface BenchedServer {
  /** Back to exactly the benchmark's seeded Note rows. */
  resetNotes (): Promise<unknown>
  /** Stops the server and its database; called once. */
  close (): Promise<void>
  /** The statements one request sends on the server's database pool (the kit's server only). */
  captureSql? (path: string, headers: Record<string, string>): Promise<string[]>
}

/** How long after its gc() the 'memory-live' reading waits. */
export const LIVE_READING_DELAY_MS = 3000

export function answerRunner (server: BenchedServer): void {
  const profiler = new PhaseProfiler()
  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= server.close()
    return closing
  }

  const perform = async (command: Command): Promise<unknown> => {
    switch (command.cmd) {
      case 'reset-notes': return server.resetNotes()
      case 'profile-start': return profiler.start()
      case 'profile-stop': return profiler.stop(command.file)
      case 'memory': return memorySample()
      case 'memory-live':
        (globalThis as { gc?: () => void }).gc?.()
        // V8 unmaps the pages a collection freed on a background thread: right after gc() the RSS has not dropped yet (20–50 MB on the kit's server).
        await new Promise((resolve) => setTimeout(resolve, LIVE_READING_DELAY_MS))
        return memorySample()
      case 'heap-summary': return heapSummary(command.snapshot, 25, command.gc ?? true)
      case 'close': return close()
      case 'capture-sql':
        if (!server.captureSql) throw new Error('this server does not capture its SQL')
        return server.captureSql(command.path, command.headers)
    }
  }

  process.on('message', (command: Command) => {
    perform(command).then(
      (value) => process.send!({ id: command.id, ok: true, value } satisfies Reply),
      (error: Error) => process.send!({ id: command.id, ok: false, error: error.stack ?? String(error) } satisfies Reply)
    ).finally(() => {
      if (command.cmd === 'close') process.disconnect()
    })
  })
  // The runner went away without saying so, or Ctrl-C reached the whole group: do not leave PostgreSQL behind.
  const stop = () => { close().finally(() => process.exit(0)) }
  process.on('disconnect', stop)
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}
