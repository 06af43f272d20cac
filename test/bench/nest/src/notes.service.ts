// Reads and writes notes through TypeORM's repository.
import { BadRequestException, Injectable } from '@nestjs/common'
import { InjectRepository } from '@nestjs/typeorm'
import { Repository } from 'typeorm'
import { CreateNoteDto } from './dto'
import { Note } from './note.entity'

export interface NoteJSON {
  objectId: string
  title: string
  body?: string
  status: string
  slug: string
  views: number
  createdAt: string
  updatedAt: string
}

const MAX_LIMIT = 100
/** The paged list's largest page and its count's cap, as the kit's listNotes (clampLimit, count { upTo: 1000 }). */
const PAGE_MAX = 1000
const COUNT_UP_TO = 1000

/** `next` is null on the last page. */
export interface NotePage { results: NoteJSON[], next: string | null, count: number, countKind: 'exact' | 'atLeast' }

/** The cursor: the last row's createdAt as PostgreSQL prints it (microseconds kept) and its id. */
function encodeCursor (createdAt: string, id: number): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url')
}

function decodeCursor (after: string): { at: string, id: number } {
  try {
    const [at, id] = JSON.parse(Buffer.from(after, 'base64url').toString()) as unknown[]
    if (typeof at === 'string' && !Number.isNaN(Date.parse(at)) && Number.isInteger(id)) return { at, id: id as number }
  } catch {}
  throw new BadRequestException('after: not a cursor this list gave')
}

function toJSON (note: Note): NoteJSON {
  return {
    objectId: String(note.id),
    title: note.title,
    ...(note.body === null ? {} : { body: note.body }),
    status: note.status,
    slug: note.slug,
    views: note.views,
    createdAt: note.createdAt.toISOString(),
    updatedAt: note.updatedAt.toISOString()
  }
}

/** "Hello, World!" → "hello-world", plus a short suffix so two equal titles stay unique (as the kit's fixture does). */
function slugify (title: string): string {
  const base = title.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'note'
  return `${base}-${Math.random().toString(36).slice(2, 8)}`
}

@Injectable()
export class NotesService {
  constructor (@InjectRepository(Note) private readonly notes: Repository<Note>) {}

  async list (limit = 100, status?: string): Promise<{ results: NoteJSON[], count: number }> {
    const [rows, count] = await this.notes.findAndCount({
      where: status ? { status } : {},
      order: { createdAt: 'DESC' },
      take: Math.min(limit, MAX_LIMIT)
    })
    return { results: rows.map(toJSON), count }
  }

  /**
   * Newest first, keyset-paged on (createdAt, id) by the (createdAt, id)
   * index; rows and a count capped at 1000 run side by side. Anonymous callers
   * see the public notes, a signed-in caller also their own.
   */
  async page (limit = 100, after: string | undefined, userId: string | null): Promise<NotePage> {
    const take = Math.min(limit, PAGE_MAX)
    const visible = userId ? '(n."publicRead" OR n."ownerId" = :userId)' : 'n."publicRead"'
    const rows = this.notes.createQueryBuilder('n').where(visible, { userId })
      .addSelect('n."createdAt"::text', 'cursor_at')
      // One row more than the page says whether a next page exists.
      .orderBy('n.createdAt', 'DESC').addOrderBy('n.id', 'DESC').limit(take + 1)
    if (after) {
      const cursor = decodeCursor(after)
      rows.andWhere('(n."createdAt", n.id) < (CAST(:at AS timestamptz), :id)', cursor)
    }
    const [capped, parameters] = this.notes.createQueryBuilder('n').select('1').where(visible, { userId }).limit(COUNT_UP_TO + 1).getQueryAndParameters()
    const [found, [{ count }]] = await Promise.all([
      rows.getRawAndEntities<{ cursor_at: string }>(),
      this.notes.query(`SELECT count(*)::int AS count FROM (${capped}) AS capped`, parameters) as Promise<Array<{ count: number }>>
    ])
    const more = found.entities.length > take
    return {
      results: found.entities.slice(0, take).map(toJSON),
      next: more ? encodeCursor(found.raw[take - 1].cursor_at, found.entities[take - 1].id) : null,
      count: Math.min(count, COUNT_UP_TO),
      countKind: count > COUNT_UP_TO ? 'atLeast' : 'exact'
    }
  }

  async create (input: CreateNoteDto, ownerId: string | null): Promise<NoteJSON> {
    const status = input.status ?? 'draft'
    const note = this.notes.create({
      title: input.title,
      body: input.body ?? null,
      status,
      slug: slugify(input.title),
      views: 0,
      ownerId,
      publicRead: status === 'published'
    })
    return toJSON(await this.notes.save(note))
  }
}
