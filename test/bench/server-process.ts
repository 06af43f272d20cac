// A bench server in a child process, spoken to over IPC with
// server-commands.ts's protocol: each command gets an id and one reply.
import { fork, type ChildProcess } from 'node:child_process'
import { ROOT, type Command, type Reply, type ServerReady } from './shared.js'

export type CommandBody = Command extends infer C ? C extends unknown ? Omit<C, 'id'> : never : never

export interface ServerProcess {
  ready: Promise<ServerReady>
  send: <T>(command: CommandBody) => Promise<T>
  child: ChildProcess
}

/** Forks `file` with `execArgv`; `ready` settles on its ready message (or rejects when it exits first). */
export function startServer (file: string, args: string[], execArgv: string[]): ServerProcess {
  const child = fork(file, args, { cwd: ROOT, execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  const pending = new Map<number, (reply: Reply) => void>()
  let nextId = 1
  const ready = new Promise<ServerReady>((resolve, reject) => {
    child.on('message', (message: ServerReady | Reply) => {
      if ('type' in message) resolve(message)
      else pending.get(message.id)?.(message)
    })
    child.once('exit', (code) => reject(new Error(`${file} exited (${code})`)))
  })
  const send = <T>(command: CommandBody) => new Promise<T>((resolve, reject) => {
    const id = nextId++
    pending.set(id, (reply) => reply.ok ? resolve(reply.value as T) : reject(new Error(reply.error)))
    child.send({ ...command, id })
  })
  return { ready, send, child }
}
