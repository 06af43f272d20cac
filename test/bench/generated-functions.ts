// The shape of the N functions a scale boot declares, shared by the kit's boot
// (scale.ts) and by the bare Fastify boot it is compared with (bare-routes.ts):
// both register routes for the same functions, verbs and paths.
import type { CloudFunctionOptions } from '../../lib/index.js'
import { MOUNT } from './shared.js'

type Verbs = NonNullable<CloudFunctionOptions['methods']>

const VERBS: Verbs[] = [['POST'], ['GET'], ['POST', 'PUT']]
const PER_CLASS = 10

export interface GeneratedFunction {
  index: number
  name: string
  /** The @Route prefix of the class it is on (ten functions per class). */
  prefix: string
  methods: Verbs
}

export function generatedFunctions (n: number): GeneratedFunction[] {
  return Array.from({ length: n }, (_, index) => ({
    index,
    name: `generated${index}`,
    prefix: `generated-${Math.floor(index / PER_CLASS)}`,
    methods: VERBS[index % VERBS.length]
  }))
}

/** Declared route URLs start with one of these (the entity paths, and the /functions twins' shared routes). */
export const GENERATED_URL_PREFIXES = [`${MOUNT}/generated-`, `${MOUNT}/functions/`]
