// Compile-time types a declaration implies: a handler's params from
// validation.fields, its user from requiresAuth / requireUser / requireRoles,
// and its answer from `returns`. @CloudFunction checks the handler against them.
import type { Static, TSchema } from '@sinclair/typebox'
import type Parse from 'parse/node'
import type { ValidationField } from './options.js'
import type { CloudRequestBase } from './request.js'

type Simplify<T> = { [K in keyof T]: T[K] } & {}

/** The value a declared field holds once Fastify has validated (and converted) it. */
export type FieldValue<F> =
  F extends { options: readonly (infer V)[] } ? V
    : F extends { type: 'Array' | ArrayConstructor, items: infer I } ? Array<ItemValue<I>>
      : F extends { type: infer T } ? TypeValue<T>
        : unknown

/** An Array field's element, by its `items` type: dates in a list stay the ISO text they were sent as. */
type ItemValue<I> = I extends { properties: object } ? Record<string, unknown> : I extends 'Date' | DateConstructor ? string : TypeValue<I>

type TypeValue<T> =
  T extends 'String' | StringConstructor ? string
    : T extends 'Number' | NumberConstructor ? number
      : T extends 'Boolean' | BooleanConstructor ? boolean
        // Sent as ISO 8601 text or in Parse's date encoding; the handler gets a Date (routing/parse-dates.ts).
        : T extends 'Date' | DateConstructor ? Date
          : T extends 'Object' | ObjectConstructor ? Record<string, unknown>
            : T extends 'Array' | ArrayConstructor ? unknown[]
              : unknown

/** Present after validation: required, or filled in from a default. */
type PresentKeys<Fields> = { [K in keyof Fields]: Fields[K] extends { required: true } | { default: {} | null } ? K : never }[keyof Fields]

/** `validation.fields` as the object a handler reads. */
export type FieldsParams<Fields> = Simplify<
  { [K in PresentKeys<Fields>]: FieldValue<Fields[K]> } &
  { [K in Exclude<keyof Fields, PresentKeys<Fields>>]?: FieldValue<Fields[K]> }
>

/** Params of a function: its declared fields, or any JSON object when it declares none. */
export type ParamsOf<O> = O extends { validation: { fields: infer Fields extends Record<string, ValidationField> } }
  ? FieldsParams<Fields>
  : Record<string, unknown>

/** Who may be calling. With requiresAuth / requireUser / requireRoles, a caller without the master key has a user. */
export type CallerOf<O> = NeedsUser<O> extends true
  ? { master: false, user: Parse.User } | { master: true, user: Parse.User | undefined }
  : { master: boolean, user: Parse.User | undefined }

type NeedsUser<O> =
  O extends { requiresAuth: true } ? true
    : O extends { validation: { requireUser: true } } ? true
      : O extends { requireRoles: readonly [string, ...string[]] } ? true
        : false

/** What a handler declared with these options receives. */
export type RequestOf<O> = CloudRequestBase<ParamsOf<O>> & CallerOf<O>

/** A request whose caller is a user unless it presented the master key (requiresAuth / requireUser / requireRoles). */
export type AuthenticatedRequest<P = Record<string, unknown>> = CloudRequestBase<P> & CallerOf<{ requiresAuth: true }>

/** A `returns` declaration: a TypeBox schema, or fields in the validation shorthand. */
export type ReturnsDeclaration = TSchema | Record<string, ValidationField>

/** The JSON a function answers, from `returns`. */
export type ReturnOf<O> = O extends { returns: infer R } ? (R extends TSchema ? Static<R> : FieldsParams<R>) : unknown

/**
 * A handler may answer the value itself, an object whose toJSON() gives it, or
 * a Parse.Object (its attributes are not typed: the serialiser checks it).
 */
type Answer<O> = O extends { returns: unknown } ? ReturnOf<O> | { toJSON (): ReturnOf<O> } | Parse.Object : unknown

/**
 * The params a handler reads that its declaration does not deliver, each as a
 * short sentence naming the field: the compiler shows it as the missing
 * property, so a mismatch reads `params.idd: not declared in validation.fields`.
 */
type ParamProblems<Declared, Wanted> = {
  [K in keyof Wanted & string]-?: K extends keyof Declared
    ? [Declared[K]] extends [Wanted[K]]
        ? never
        : [Exclude<Declared[K], undefined>] extends [Wanted[K]]
            ? `@CloudFunction params.${K}: optional in validation.fields (neither required nor with a default), so type it as possibly undefined`
            : `@CloudFunction params.${K}: typed differently from its validation.fields entry`
    : `@CloudFunction params.${K}: not declared in validation.fields`
}[keyof Wanted & string]

type RequestProblem<O, R> = [ParamProblems<ParamsOf<O>, R extends { params: infer P } ? P : object>] extends [never]
  ? { '@CloudFunction request.user: not guaranteed by the declaration (add requiresAuth, requireRoles or validation.requireUser)': RequestOf<O> }
  : { [K in ParamProblems<ParamsOf<O>, R extends { params: infer P } ? P : object>]: true }

/**
 * The decorator's check of a handler. Its request parameter must accept what
 * the declaration delivers (so a param typed differently from its field, an
 * undeclared param, or a user the declaration does not guarantee fails), and
 * its answer must match `returns`.
 */
export type HandlerCheck<O, H> = H extends (...args: infer Args) => infer Result
  ? [RequestOf<O>] extends [Args extends [] ? RequestOf<O> : Args[0]]
      ? [Awaited<Result>] extends [Answer<O>]
          ? unknown
          : { '@CloudFunction: the handler answers a value that does not match `returns`': Answer<O> }
      : RequestProblem<O, Args[0]>
  : unknown
