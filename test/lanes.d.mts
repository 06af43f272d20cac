// Types of test/lanes.mjs for the TypeScript helpers that read it.
export const GROUPS: Record<string, string[]>
export const CLI_TEST: string
export function testFiles (): string[]
export function laneFiles (lane: 'postgres' | 'waits' | 'mongo' | 'unit'): string[]
export function testTmpdir (env?: NodeJS.ProcessEnv): string | undefined
