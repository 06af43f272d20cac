// Starts the peer on a given database and port; the benchmark's host process
// (test/bench/nest-server.ts in the kit) calls start() and drives it.
import 'reflect-metadata'
import { ValidationPipe } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify'
import { randomBytes } from 'node:crypto'
import { DataSource } from 'typeorm'
import { AppModule } from './app.module'
import { Note } from './note.entity'
import { Session } from './session.entity'

export interface Peer {
  origin: string
  sessionToken: string
  userId: string
  /** Back to exactly `rows` seeded notes. */
  resetNotes (): Promise<void>
  close (): Promise<void>
}

export async function start (options: { databaseUrl: string, port: number, seededNotes: number }): Promise<Peer> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forDatabase(options.databaseUrl), new FastifyAdapter(), { logger: ['error', 'warn'] })
  app.useGlobalPipes(new ValidationPipe({ transform: true, whitelist: true }))
  await app.listen(options.port, '127.0.0.1')
  const data = app.get(DataSource)
  const userId = randomBytes(5).toString('hex')
  const sessionToken = `r:${randomBytes(16).toString('hex')}`
  await data.getRepository(Session).save({ token: sessionToken, userId, expiresAt: new Date(Date.now() + 365 * 24 * 3600 * 1000) })
  const resetNotes = async () => {
    await data.getRepository(Note).clear()
    const base = Date.now() - options.seededNotes * 1000
    await data.getRepository(Note).insert(Array.from({ length: options.seededNotes }, (_, i) => ({
      title: `Seeded note ${i}`, body: 'Seeded by the benchmark.', status: 'published', slug: `seeded-note-${i}`,
      views: 0, ownerId: userId, publicRead: true, createdAt: new Date(base + i * 1000), updatedAt: new Date(base + i * 1000)
    })))
  }
  await resetNotes()
  return { origin: `http://127.0.0.1:${options.port}`, sessionToken, userId, resetNotes, close: () => app.close() }
}
