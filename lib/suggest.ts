// "Did you mean …" for a path that is no route: the closest declared route by edit distance.

export function closestPath (path: string, candidates: string[]): string | undefined {
  const target = path.toLowerCase().replace(/\/$/, '')
  let best: { path: string, distance: number } | undefined
  for (const candidate of candidates) {
    const distance = editDistance(target, candidate.toLowerCase())
    if (!best || distance < best.distance) best = { path: candidate, distance }
  }
  // Close means a typo, not a different route: a few edits, and less than a third of the path.
  if (!best || best.distance > Math.max(2, Math.floor(best.path.length / 3))) return undefined
  return best.path
}

/** Levenshtein distance, two rows at a time. */
export function editDistance (a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]
}
