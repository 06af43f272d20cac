// The errors operation-fit.ts answers for a save the SDK cannot build or
// encode, marked so that a check run ahead of Parse's own stage (the build
// before the write in name-only-files.ts) answers those alone: the SDK's other
// checks on a built object (a _Role's name once its objectId is assigned)
// belong to the stage Parse runs them in.
const UNFIT = Symbol.for('fastify-parse-kit.unfit-save')

/** Marks an error as one about the save's values (a 400, 111). */
export function unfitSave<E extends object> (error: E): E {
  Object.defineProperty(error, UNFIT, { value: true })
  return error
}

export function isUnfitSave (error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { [UNFIT]?: unknown })[UNFIT] === true
}
