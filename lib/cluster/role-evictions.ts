// The role cache stays in each process; its evictions travel between
// instances over Redis pub/sub. Sent by invalidateRoles, configureRoleCache and
// every change to _Role made through Parse (saves, including the users and
// roles relations, and deletes), once the change has committed. An instance
// whose subscription is down (or whose Redis does not answer) cannot hear
// evictions, so it bypasses its role cache until the subscription is back;
// evictions it could not send meanwhile become one "evict all" once Redis answers.
import { afterRoleWrites } from '../parse/parse-calls.js'
import type { RedisLink } from './connection.js'
import type { OutageLog } from './outage-log.js'
import { isCommandTimeout, type RedisBound } from './redis-bound.js'
import type { RoleCache, RoleEviction } from '../access/role-cache.js'
import { afterCommit } from '../storage/transaction.js'

export interface RoleEvictions {
  /** Adds the eviction to _Role's afterSave and afterDelete (after the application's cloud code, keeping its triggers). */
  registerRoleTriggers (appId: string): void
  close (): void
}

export async function shareRoleEvictions (link: RedisLink, settings: { appId: string, outage: OutageLog, bound: RedisBound, roleCache: RoleCache, forgetParseRoles: (eviction: RoleEviction) => Promise<void> }): Promise<RoleEvictions> {
  const { commands, subscriber } = link
  const { roleCache } = settings
  const channel = `fastify-parse-kit:${settings.appId}:role-evictions`
  const { bound } = settings
  /** An eviction could not be published: the others may hold stale entries. */
  let unsent = false
  // Parse's own role lists (shared in Redis) go first, so no instance reloads stale roles from them.
  const send = async (eviction: RoleEviction) => {
    await settings.forgetParseRoles(eviction)
    if (bound.bypassed || commands.status !== 'ready') {
      unsent = true
      return
    }
    await commands.publish(channel, JSON.stringify(eviction)).catch((error: unknown) => {
      unsent = true
      if (isCommandTimeout(error)) bound.noAnswer('role evictions')
      else settings.outage.down('commands', error)
    })
  }
  bound.onBypass(() => roleCache.suspend(true))
  const resend = () => {
    if (subscriber.status === 'ready') roleCache.suspend(false)
    if (!unsent) return
    unsent = false
    void send({ all: true })
  }
  bound.onRecovery(resend)
  commands.on('ready', resend)
  const onMessage = (from: string, message: string) => {
    if (from !== channel) return
    const eviction = decode(message)
    if (eviction) roleCache.evict(eviction)
  }
  // Until the subscription is confirmed again, evictions from others could be missed.
  const onClose = () => roleCache.suspend(true)
  const onReady = () => {
    subscriber.subscribe(channel).then(() => roleCache.suspend(false), () => {})
  }
  subscriber.on('message', onMessage)
  subscriber.on('close', onClose)
  subscriber.on('ready', onReady)
  await subscriber.subscribe(channel)
  roleCache.broadcastTo((eviction) => { void send(eviction) })

  const roleChanged = async () => {
    roleCache.evict({ all: true })
    await send({ all: true })
  }
  return {
    registerRoleTriggers (appId) {
      afterRoleWrites(appId, () => afterCommit(roleChanged))
    },
    close () {
      commands.off('ready', resend)
      roleCache.broadcastTo(undefined)
      subscriber.off('message', onMessage)
      subscriber.off('close', onClose)
      subscriber.off('ready', onReady)
      roleCache.suspend(false)
    }
  }
}

function decode (message: string): RoleEviction | undefined {
  try {
    const value = JSON.parse(message) as { all?: unknown, userIds?: unknown }
    if (value.all === true) return { all: true }
    if (Array.isArray(value.userIds) && value.userIds.every((id) => typeof id === 'string')) return { userIds: value.userIds }
  } catch {}
  return undefined
}
