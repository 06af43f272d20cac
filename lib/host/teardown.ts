// What a boot opened, closed in one order by a boot that fails part-way and by
// the server's close alike: the reverse of opening. The jobs and the queue
// stop first (their runs still use Parse, the metrics and the database), then
// the metrics, LiveQuery, Parse (it ends its pool), Redis, and last the
// database Parse was using.
// Every step runs even when one before it failed, so a Parse that fails to
// shut down cannot leave an embedded PostgreSQL running; the first failure is
// thrown once all have run.

/** What a boot has opened so far (the database always; the rest once started). */
export interface Opened {
  database: { close (): Promise<void> }
  cluster?: { close (): Promise<void> }
  parse?: { shutdown (): Promise<void> }
  metrics?: { close (): void }
  liveQuery?: { shutdown (): Promise<void> }
  /** Stops the schedules' and the queue's runs (idempotent: the drain may have called it already). */
  stopJobs?: () => Promise<void>
}

export async function closeOpened (opened: Opened): Promise<void> {
  const steps: Array<() => unknown> = [
    () => opened.stopJobs?.(),
    () => opened.metrics?.close(),
    () => opened.liveQuery?.shutdown(),
    () => opened.parse?.shutdown(),
    () => opened.cluster?.close(),
    () => opened.database.close()
  ]
  const failures: unknown[] = []
  for (const step of steps) {
    try {
      await step()
    } catch (error) {
      failures.push(error)
    }
  }
  if (failures.length > 0) throw failures[0]
}
