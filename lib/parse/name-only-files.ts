// Parse's REST form lets a save name a File by its name alone; Parse stores
// only the name and fills the url into its answer. Its afterSave and LiveQuery
// runners, though, encode the saved object through the SDK, which cannot
// encode a File without url: the row was stored and the save then failed
// (before operation-fit.ts, the process ended). Here, before the beforeSave
// and the write, a top-level File without url gets its url as Parse fills it
// in the answer (its FilesController's expandFilesInObject: the files
// adapter's getFileLocation, `fileKey`), so every trigger sees the url; the
// row still stores the name alone. On a class with an afterSave or LiveQuery,
// what the runner will encode is then checked before the write (a File
// nested in an Object or Array keeps no url, as in Parse's answer): a 400,
// nothing stored. So on a class with an afterFind, beforeDelete or
// afterDelete, whose runners read the stored row through the SDK.
import { parseInternals } from './internals.js'
import { isUnfitSave } from './unfit-save.js'

const WRAPPED = Symbol.for('fastify-parse-kit.name-only-files')
/** Triggers that get the saved object, or the stored row, as the SDK reads it. */
const READERS = ['afterSave', 'afterFind', 'beforeDelete', 'afterDelete'] as const

interface FilesConfig {
  applicationId: string
  filesController: { expandFilesInObject (config: unknown, object: unknown): Promise<void> }
  liveQueryController: { hasLiveQuery (className: string): boolean }
}
interface Write {
  config: FilesConfig
  className: string
  data?: Record<string, unknown>
  runOptions?: { many?: boolean }
  buildParseObjects (): unknown
}
type Step = (this: Write) => unknown

/** Wraps RestWrite#runBeforeSaveTrigger and #expandFilesForExistingObjects (once per process). */
export function fillFileUrls (): void {
  const { RestWrite, triggers } = parseInternals()
  const prototype = RestWrite.prototype as unknown as { runBeforeSaveTrigger: Step, expandFilesForExistingObjects: Step, [WRAPPED]?: true }
  if (prototype[WRAPPED]) return
  prototype[WRAPPED] = true
  const beforeSave = prototype.runBeforeSaveTrigger
  prototype.runBeforeSaveTrigger = async function (this: Write) {
    if (this.data && hasFileWithoutUrl(this.data)) await this.config.filesController.expandFilesInObject(this.config, this.data)
    return await beforeSave.call(this)
  }
  const beforeWrite = prototype.expandFilesForExistingObjects
  prototype.expandFilesForExistingObjects = async function (this: Write) {
    // runAfterSaveTrigger's own conditions, and the triggers that read the stored row through the SDK (an afterFind
    // for every read, a beforeDelete or afterDelete for the delete: a row they cannot read answered 500 to everyone);
    // buildParseObjects (operation-fit.ts) throws the 400 for what cannot encode.
    if (this.data && !this.runOptions?.many && (this.config.liveQueryController.hasLiveQuery(this.className) ||
      READERS.some((type) => triggers.getTrigger(this.className, triggers.Types[type], this.config.applicationId) !== undefined))) {
      try {
        this.buildParseObjects()
      } catch (error) {
        // Only what the afterSave's encoding would fail on is answered here: the SDK's other checks of a built
        // object (a _Role's name, refused once this stage has assigned the objectId) are not this stage's.
        if (isUnfitSave(error)) throw error
      }
    }
    return await beforeWrite.call(this)
  }
}

function hasFileWithoutUrl (data: Record<string, unknown>): boolean {
  for (const key in data) {
    const value = data[key] as { __type?: unknown, url?: unknown } | null
    if (value !== null && typeof value === 'object' && value.__type === 'File' && !value.url) return true
  }
  return false
}
