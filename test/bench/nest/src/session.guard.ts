// Session checks: the token in X-Parse-Session-Token must name a live session.
// SessionGuard reads the session row on every request; CachedSessionGuard
// keeps what it read for 5 s (as Parse's own cache does by default).
import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common'
import { InjectRepository } from '@nestjs/typeorm'
import { Repository } from 'typeorm'
import { Session } from './session.entity'

const CACHE_MS = 5_000

interface WithUser { userId?: string, headers: Record<string, string | string[] | undefined> }

function tokenOf (request: WithUser): string {
  const token = request.headers['x-parse-session-token']
  if (typeof token !== 'string' || token === '') throw new UnauthorizedException('a session token is required')
  return token
}

@Injectable()
export class SessionGuard implements CanActivate {
  constructor (@InjectRepository(Session) private readonly sessions: Repository<Session>) {}

  async canActivate (context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<WithUser>()
    const session = await this.sessions.findOne({ where: { token: tokenOf(request) } })
    if (!session || session.expiresAt.getTime() < Date.now()) throw new UnauthorizedException('invalid session token')
    request.userId = session.userId
    return true
  }
}

@Injectable()
export class CachedSessionGuard implements CanActivate {
  private readonly cache = new Map<string, { userId: string, until: number }>()

  constructor (@InjectRepository(Session) private readonly sessions: Repository<Session>) {}

  async canActivate (context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<WithUser>()
    const token = tokenOf(request)
    const now = Date.now()
    let hit = this.cache.get(token)
    if (!hit || hit.until < now) {
      const session = await this.sessions.findOne({ where: { token } })
      if (!session || session.expiresAt.getTime() < now) throw new UnauthorizedException('invalid session token')
      hit = { userId: session.userId, until: Math.min(now + CACHE_MS, session.expiresAt.getTime()) }
      this.cache.set(token, hit)
    }
    request.userId = hit.userId
    return true
  }
}
