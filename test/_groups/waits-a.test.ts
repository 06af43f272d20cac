// The test files of group waits-a (test/lanes.mjs), in one process.
import { runGroup } from '../helpers/file-group.js'

await runGroup(import.meta.url)
