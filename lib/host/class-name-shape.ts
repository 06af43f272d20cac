// Parse Server looks classes up in plain objects: a class named like a member
// every JavaScript object has (`constructor`, `toString`, `hasOwnProperty`,
// `__proto__`) finds that member instead of a schema, and a save to it throws a
// TypeError (a 500, master key included; inside a /batch with the TypeError's
// text). `constructor` and `toString` even pass Parse's class name pattern. The
// mount refuses such names in the paths that name a class.

/** Parse's routes whose second segment is a class name. */
const CLASS_PATH = /^\/(?:classes|aggregate|schemas|purge)\/([^/]+)(?:\/[^/]*)?\/?$/i

/** Why Parse cannot serve the class this path names, or undefined. */
export function classNameProblem (_method: string, path: string): string | undefined {
  const name = CLASS_PATH.exec(path)?.[1]
  if (name === undefined || !(name in Object.prototype)) return undefined
  return `${name} is not a class name Parse can serve: every JavaScript object has a member of that name`
}
