// Constant-time comparison of secrets (keys, tokens). A leaf: the access
// checks and the metrics endpoint's bearer token both compare secrets, and
// neither folder imports the other.
import { hash, timingSafeEqual } from 'node:crypto'

/** A secret's SHA-256, compared in constant time by secretsEqual. One-shot hashing: no Hash object per call (this runs on every master-key request). */
export const secretDigest = (value: string): Buffer => hash('sha256', value, 'buffer')

/** Compares secrets in constant time (hashing first so lengths do not leak either). */
export function secretsEqual (presented: string | undefined, expected: string | undefined, expectedDigest?: Buffer): boolean {
  if (presented === undefined || expected === undefined || expected === '') return false
  return timingSafeEqual(secretDigest(presented), expectedDigest ?? secretDigest(expected))
}
