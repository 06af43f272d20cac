// Parse's own log lines through the kit's logger adapter: a refusal the client is
// answered with a 4xx is logged at info without its stack; server faults stay errors.
// From the former no-log-files.test.ts: importing the library writes nothing to
// disk (Parse's file logger stays off), checked in a process of its own.
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import Fastify from 'fastify'
import Parse from 'parse/node'
import { parseLoggerAdapter } from '../lib/host/parse-logger.js'

function capture () {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const adapter = parseLoggerAdapter(Fastify({ logger: { level: 'trace', stream } }).log)
  return { lines, adapter }
}

t.test('a validation refusal from beforeSave is info, with its code and without a stack', async (t) => {
  const { lines, adapter } = capture()
  const refusal = new Parse.Error(Parse.Error.VALIDATION_ERROR, 'Tag is invalid: name is required')
  adapter.log('error', 'beforeSave failed for Tag for user undefined:\n  Input: {"sessionToken":"r:abc"}', { className: 'Tag', triggerType: 'beforeSave', error: refusal })
  adapter.log('error', 'Parse error: ', refusal)
  t.equal(lines.length, 2)
  for (const line of lines) {
    t.equal(line.level, 30, 'info')
    t.equal(line.err, undefined, 'no stack')
    t.same([line.code, line.error], [142, 'Tag is invalid: name is required'], 'the answer\'s {code, error}')
  }
  t.equal(lines[0]!.className, 'Tag', 'the other fields stay')
  t.match(String(lines[0]!.msg), /"sessionToken":"\[redacted\]"|"sessionToken":"\*+"/, 'still redacted')
  t.notMatch(String(lines[0]!.msg), /r:abc/)
})

t.test('server faults stay errors with their stack', async (t) => {
  const { lines, adapter } = capture()
  adapter.log('error', 'Parse error: ', new Parse.Error(Parse.Error.INTERNAL_SERVER_ERROR, 'boom'))
  adapter.log('error', 'Parse error: ', new Parse.Error(Parse.Error.SCRIPT_FAILED, 'the handler threw'))
  adapter.log('error', 'Parse error: ', new Parse.Error(Parse.Error.CONNECTION_FAILED, 'no server'))
  adapter.log('error', 'Parse error: ', new Parse.Error(5003, 'The database cannot be reached right now'))
  adapter.log('error', 'Uncaught internal server error.', new Error('a bug'))
  t.same(lines.map((line) => line.level), [50, 50, 50, 50, 50])
  t.ok(lines.every((line) => typeof (line.err as { stack?: unknown }).stack === 'string'), 'each with its stack')
})

t.test('a refusal logged at another level keeps that level', async (t) => {
  const { lines, adapter } = capture()
  adapter.log('warn', 'a warning', new Parse.Error(Parse.Error.OBJECT_NOT_FOUND, 'Object not found.'))
  t.equal(lines[0]!.level, 40)
})

t.test('lines a client can cause at will are info without a stack; Redis reconnect attempts are debug', async (t) => {
  const { lines, adapter } = capture()
  adapter.log('error', 'Parse error: ', new Parse.Error(Parse.Error.SCRIPT_FAILED, 'Invalid function: "nope"'))
  adapter.log('error', 'unable to parse request', 'not json', new SyntaxError('Unexpected token'))
  adapter.log('error', 'Connect message error %s', 'No enum match for: "bogus"')
  adapter.log('error', 'Get unknown operation', 'bogus')
  adapter.log('error', 'Key in request is not valid')
  adapter.log('error', 'Can not find subscription with clientId abc subscriptionId 9')
  adapter.log('error', 'Can not fetch userId for sessionToken %j, error %j', 'r:0123456789abcdef0123456789abcdef', { message: 'Invalid session token' })
  adapter.log('error', 'RedisPubSub Subscriber client error', { error: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }) })
  adapter.log('error', 'RedisCacheAdapter error on get', { error: new Error('Connection is closed.') })
  t.same(lines.map((line) => line.level), [30, 30, 30, 30, 30, 30, 30, 20, 20])
  t.ok(lines.slice(0, 7).every((line) => line.err === undefined), 'no stack on the client-caused lines')
  t.same([lines[0]!.code, lines[0]!.error], [141, 'Invalid function: "nope"'], 'an unknown function keeps its answer\'s {code, error}')
  t.equal(lines[1]!.error, 'Unexpected token', 'what was wrong with the message')
  t.equal(lines[1]!.detail, undefined, 'but not the client\'s raw message')
  t.notMatch(String(lines[6]!.msg), /r:0123/, 'a session token in running text is redacted')
})

t.test('the details of refusals Parse answers "Permission denied" for, and refused subscriptions, are info; its internal errors and failed handlers stay errors', async (t) => {
  const { lines, adapter } = capture()
  const refusals = [
    'Invalid session token',
    'Permission denied for action create on class Note.',
    'Permission denied, user needs to be authenticated.',
    'This user is not allowed to query secret on class Note',
    "Clients aren't allowed to perform the find operation on the _Session collection.",
    'Invalid application ID.',
    'unauthorized: master key is required',
    '$or must be an array'
  ]
  for (const text of refusals) adapter.log('error', text)
  adapter.log('error', 'Failed running beforeSubscribe on Note for session undefined with:\n Error: {"message":"Invalid regular expression: /(/: Unterminated group","code":102}')
  adapter.log('error', 'Failed running beforeSubscribe on Note for session r:0123456789abcdef0123456789abcdef with:\n Error: {"message":"No such room","code":101}')
  adapter.log('error', 'Invalid session token, and more')
  adapter.log('error', 'An internal server error occurred')
  adapter.log('error', 'Failed running beforeSubscribe on Note for session undefined with:\n Error: {"message":"x is not a function","code":141}')
  t.same(lines.map((line) => line.level), [...refusals.map(() => 30), 30, 30, 50, 50, 50])
  t.notMatch(String(lines[refusals.length + 1]!.msg), /r:0123/, 'the session token is redacted')
})

t.test('a failed function (141 other than an unknown name) stays an error', async (t) => {
  const { lines, adapter } = capture()
  adapter.log('error', 'Parse error: ', new Parse.Error(Parse.Error.SCRIPT_FAILED, 'Cannot read properties of undefined'))
  t.equal(lines[0]!.level, 50)
})

// From the former no-log-files.test.ts.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

t.test('importing the library creates no ./logs/ and no log files', async (t) => {
  const cwd = mkdtempSync(path.join(tmpdir(), 'fpk-logs-'))
  t.teardown(() => rmSync(cwd, { recursive: true, force: true }))
  const env = { ...process.env }
  delete env.TESTING
  delete env.PARSE_SERVER_LOGS_FOLDER
  const entry = pathToFileURL(path.join(root, 'lib/index.ts')).href
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--import', import.meta.resolve('tsx/esm'), '--input-type=module',
    '-e', `const kit = await import(${JSON.stringify(entry)}); console.log(typeof kit.kitPlugin)`
  ], { cwd, env })
  t.equal(stdout.trim(), 'function', 'the library loaded')
  t.notOk(existsSync(path.join(cwd, 'logs')), 'no ./logs/')
  t.notOk(existsSync(path.join(cwd, 'test_logs')), 'no ./test_logs/')
  t.same(readdirSync(cwd), [], 'nothing written in the working directory')
})
