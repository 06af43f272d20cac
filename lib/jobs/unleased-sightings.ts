// When a "running" row without a lease counts as lost, judged by the looking
// instance's own monotonic clock: the row's createdAt was written with the
// clock of the instance that began the run, and an instance whose clock runs
// minutes slow would otherwise have its healthy runs taken in the moment
// between Parse marking the row running and the handler writing the lease.
// A row is due once this instance has seen it leaseless at every look over
// `windowMs`; one missing from a look (it took its lease, it ended) starts over.

/** First sightings of leaseless running rows by id, on this instance's clock. One per watcher (so per kit), never larger than one look's rows. */
export type UnleasedSightings = Map<string, number>

/** Records this look's leaseless rows (forgetting the others) and answers those seen leaseless for `windowMs` or more. */
export function dueUnleased (sightings: UnleasedSightings, seen: string[], now: number, windowMs: number): string[] {
  const current = new Set(seen)
  for (const id of sightings.keys()) if (!current.has(id)) sightings.delete(id)
  const due: string[] = []
  for (const id of current) {
    const since = sightings.get(id)
    if (since === undefined) sightings.set(id, now)
    else if (now - since >= windowMs) due.push(id)
  }
  return due
}
