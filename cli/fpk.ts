// fpk: create a fastify-parse-kit project, add resources and models to it,
// and write assistant instruction files.
import { Command, CommanderError } from 'commander'
import { CliError, processIo, type Io } from './context.js'
import { kitPackage } from './kit.js'
import { newProject } from './commands/new.js'
import { generate, generateJob } from './commands/generate.js'
import { ai, ASSISTANTS } from './commands/ai.js'
import { PLAN_COULD_NOT_RUN, schemaPlan } from './commands/schema.js'
import { client, DEFAULT_CLIENT_OUT } from './commands/client.js'

/** A command's exit code other than 0 (fpk schema plan's 1 and 2). */
export interface Outcome { exitCode: number }

export function buildProgram (io: Io, outcome: Outcome = { exitCode: 0 }): Command {
  const program = new Command('fpk')
  // Set before any subcommand exists: subcommands inherit these settings.
  program
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride()
    .showHelpAfterError('(fpk --help lists the commands)')
    .showSuggestionAfterError(true)
  program
    .description('fastify-parse-kit: Parse Server on Fastify, with models and endpoints declared as TypeScript classes')
    .version(kitPackage().version, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .addHelpText('after', [
      '',
      'Examples:',
      '  fpk new my-api                        a project, dependencies installed',
      '  fpk new my-api -y --no-install --ai=1,6',
      '  fpk g resource Product                model + createProduct, listProducts, getProduct, updateProduct, deleteProduct',
      '  fpk g model Tag                       model only',
      '  fpk g functions Tag                   the five endpoints for an existing model',
      '  fpk ai 1,6                            CLAUDE.md and AGENTS.md',
      '  fpk schema plan                       what the next boot changes in the database (exit 0 none, 1 changes, 2 destructive, 3 could not run)',
      '  fpk client --out src/api-client.ts    typed client types from the running server\'s API document'
    ].join('\n'))

  program.command('new')
    .description('create a project that boots and serves (installs its dependencies unless --no-install)')
    .argument('<name>', 'folder and package name, e.g. my-api')
    .option('-y, --yes', 'accept the defaults without asking')
    .option('-f, --force', 'write into a folder that is not empty, replacing files of the same names')
    .option('--no-install', 'skip npm install')
    .option('--ai <targets>', 'assistant files: comma list of 1-6 or names, or none (default 6, AGENTS.md)')
    .option('--kit <path>', 'the kit from a local folder or .tgz (vendored into the project) instead of the registry')
    .action((name: string, options: { yes?: boolean, force?: boolean, install: boolean, ai?: string, kit?: string }) => newProject(io, name, options))

  const generateCommand = program.command('generate')
    .alias('g')
    .description('add files to the project (models and functions are discovered at boot: nothing is registered)')
  generateCommand.command('resource')
    .description('a model and a functions file with five endpoints: createX, listXs, getX, updateX, deleteX')
    .argument('<Name>', 'PascalCase class name, e.g. Product')
    .option('-y, --yes', 'accept the defaults (generate never asks)')
    .option('-f, --force', 'overwrite existing files')
    .action((name: string, options: { force?: boolean }) => generate(io, 'resource', name, options))
  generateCommand.command('model')
    .description('a model file only')
    .argument('<Name>', 'PascalCase class name, e.g. Tag')
    .option('-y, --yes', 'accept the defaults (generate never asks)')
    .option('-f, --force', 'overwrite an existing file')
    .action((name: string, options: { force?: boolean }) => generate(io, 'model', name, options))
  generateCommand.command('functions')
    .alias('endpoints')
    .description('the five endpoints for a model the project already declares (the model file is left alone)')
    .argument('<Name>', 'the model\'s class name, e.g. Tag')
    .option('-y, --yes', 'accept the defaults (generate never asks)')
    .option('-f, --force', 'overwrite an existing functions file')
    .action((name: string, options: { force?: boolean }) => generate(io, 'functions', name, options))
  generateCommand.command('job')
    .description('a background job (@Job, run by hand or on a schedule) and its test')
    .argument('<Name>', 'PascalCase name, e.g. CleanupDrafts (the job is cleanupDrafts)')
    .option('-y, --yes', 'accept the defaults (generate never asks)')
    .option('-f, --force', 'overwrite existing files')
    .action((name: string, options: { force?: boolean }) => generateJob(io, name, options))

  program.command('client')
    .description('TypeScript types for a typed API client (openapi-fetch), generated from the OpenAPI document by openapi-typescript')
    .option('--out <file>', 'where to write the types', DEFAULT_CLIENT_OUT)
    .option('--from <url or file>', 'the OpenAPI document (default: the running server\'s http://127.0.0.1:$PORT$DOCS_PATH/json)')
    .option('-f, --force', 'replace a file at --out that fpk client did not write')
    .action((options: { out?: string, from?: string, force?: boolean }) => client(io, options))

  program.command('ai')
    .description('write assistant instruction files about this kit\'s rules and traps')
    .argument('[targets]', `comma list: ${ASSISTANTS.map((a) => `${a.number} ${a.label}`).join(', ')}, 0 none (default 6)`)
    .option('-y, --yes', 'accept the default (6) without asking')
    .option('-f, --force', 'overwrite existing files (they are kept otherwise)')
    .action((targets: string | undefined, options: { yes?: boolean, force?: boolean }) => ai(io, targets, options))

  const schemaCommand = program.command('schema')
    .description('the database schema the declarations ask for')
  schemaCommand.command('plan')
    .description('print what the next boot would change (fields, class-level permissions, indexes, constraints); exit 0 no change, 1 changes, 2 destructive changes, 3 the plan could not run')
    .option('--models <dir>', 'the models directory (default: the project\'s models/)')
    .option('--data-dir <dir>', 'the embedded PostgreSQL data directory when DATABASE_URI is unset (default: DATA_DIR, else .data/postgres)')
    .option('--admin-role <role>', 'the application\'s adminRole (default SuperAdmin)')
    .option('--no-strict', 'the application sets schema.strict: false: the boot creates no class and no field')
    .option('--delete-extra-fields', 'the application sets schema.deleteExtraFields: undeclared fields will be dropped')
    .option('--recreate-modified-fields', 'the application sets schema.recreateModifiedFields: retyped fields will be recreated')
    .option('--schema-version <n>', 'the application\'s schema.version')
    .option('--sql', 'under each change, the statements PostgreSQL will run')
    .addHelpText('after', '\nReads DATABASE_URI, or the project\'s embedded database (stop the application first: one PostgreSQL per data directory).')
    .action(async (options: { models?: string, dataDir?: string, adminRole?: string, strict?: boolean, deleteExtraFields?: boolean, recreateModifiedFields?: boolean, schemaVersion?: string, sql?: boolean }) => {
      outcome.exitCode = await schemaPlan(io, options)
    })

  return program
}

/** Runs the command line; resolves to the exit code instead of exiting. */
export async function main (argv: string[] = process.argv, io: Io = processIo()): Promise<number> {
  try {
    const outcome = { exitCode: 0 }
    await buildProgram(io, outcome).parseAsync(argv)
    return outcome.exitCode
  } catch (error) {
    // commander has printed its message; a plan that did not run must not read as "changes" (1).
    if (error instanceof CommanderError) return error.exitCode !== 0 && argv[2] === 'schema' && argv[3] === 'plan' ? PLAN_COULD_NOT_RUN : error.exitCode
    if (error instanceof CliError) {
      io.err(`fpk: ${error.message}\n`)
      return error.exitCode
    }
    // The file system's refusals (EACCES, ENOSPC, ENOTDIR, …) are the user's to act on: their message names the path.
    if (isSystemError(error)) {
      io.err(`fpk: ${error.message}\n`)
      return 1
    }
    io.err(`fpk: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`)
    return 1
  }
}

function isSystemError (error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string' && typeof (error as NodeJS.ErrnoException).code === 'string'
}
