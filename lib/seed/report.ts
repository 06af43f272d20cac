// What a seed run did, by kind ("roles", "users", "notes"…), printed so that a
// second run visibly creates nothing.

export class SeedReport {
  private readonly created = new Map<string, string[]>()

  /** Records a kind even when nothing of it was created, so the summary can say so. */
  expect (kind: string): this {
    if (!this.created.has(kind)) this.created.set(kind, [])
    return this
  }

  add (kind: string, name: string): void {
    this.expect(kind)
    this.created.get(kind)!.push(name)
  }

  createdOf (kind: string): string[] {
    return [...(this.created.get(kind) ?? [])]
  }

  get total (): number {
    return [...this.created.values()].reduce((sum, names) => sum + names.length, 0)
  }

  /** "roles created: Admin, Editor" … or "notes created: none (already present)". */
  lines (): string[] {
    return [...this.created].map(([kind, names]) => `${kind} created: ${names.length > 0 ? names.join(', ') : 'none (already present)'}`)
  }
}
