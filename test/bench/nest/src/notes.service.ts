// Reads and writes notes through TypeORM's repository.
import { Injectable } from '@nestjs/common'
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
