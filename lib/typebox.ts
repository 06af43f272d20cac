// TypeBox's values (builders, guards, Value, the compiler) through its
// CommonJS build, taken with `require`. Its ES module build is 218 small files:
// under a module loader hook (tsx in development and in the tests) each one
// crosses to Node's loader thread, which cost about 0.9 CPU-s a process
// against 0.25 for the CommonJS build (0.2 either way under plain node). The
// two builds make the same plain schema objects, keyed by `Symbol.for`
// symbols, so a schema built with either passes the other's checks; the
// types stay TypeBox's own (`typeof import(...)`). Applications take `Type`
// from `fastify-parse-kit`, which is this one: one copy of TypeBox loaded.
// Import TypeBox's types from '@sinclair/typebox' with `import type` anywhere.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

const typebox = require('@sinclair/typebox') as typeof import('@sinclair/typebox')
const value = require('@sinclair/typebox/value') as typeof import('@sinclair/typebox/value')
const compiler = require('@sinclair/typebox/compiler') as typeof import('@sinclair/typebox/compiler')
const errors = require('@sinclair/typebox/errors') as typeof import('@sinclair/typebox/errors')

// Each typed as TypeBox's own, so the declarations the build emits name TypeBox's types.
export const Type: typeof typebox.Type = typebox.Type
export const Kind: typeof typebox.Kind = typebox.Kind
export const KindGuard: typeof typebox.KindGuard = typebox.KindGuard
export const Value: typeof value.Value = value.Value
export const TypeCompiler: typeof compiler.TypeCompiler = compiler.TypeCompiler
export const ValueErrorType: typeof errors.ValueErrorType = errors.ValueErrorType
