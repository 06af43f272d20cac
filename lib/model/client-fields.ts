// schema.maxClientFields: how many fields a stored class may reach through
// saves without the master key (a sign-up adding keys to `_User`, where Parse
// leaves addField public). The check is Parse's addField step
// (parse/client-field-bound.ts, installed once per process); the bound is the
// running kit's (lib/kit-state.ts).
import { boundClientFieldAdds } from '../parse/client-field-bound.js'
import { currentKitState, statePart, type KitState } from '../kit-state.js'

/** Enough for a class grown by its clients in development; far below PostgreSQL's 1,600 columns. */
export const DEFAULT_MAX_CLIENT_FIELDS = 100

const boundPart = statePart('client field bound', () => ({ bound: undefined as number | undefined }))

/** Sets the running kit's bound (false: none) and installs the check. */
export function boundClientFields (state: KitState, bound: number | false | undefined): void {
  state.get(boundPart).bound = bound === false ? undefined : bound ?? DEFAULT_MAX_CLIENT_FIELDS
  boundClientFieldAdds(() => currentKitState().get(boundPart).bound)
}
