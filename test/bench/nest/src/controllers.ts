// The three endpoints, with and without a session check, at the paths the kit uses.
import { Body, Controller, Get, HttpCode, Post, Query, Req, UseGuards } from '@nestjs/common'
import { CreateNoteDto, ListNotesPageQuery, ListNotesQuery } from './dto'
import { NotesService } from './notes.service'
import { CachedSessionGuard, SessionGuard } from './session.guard'

export const BENCH_CONSTANT = Object.freeze({ ok: true, answer: 42, text: 'constant' })

@Controller('parse/bench')
export class BenchController {
  @Post('benchConstant')
  @HttpCode(200)
  constant () {
    return BENCH_CONSTANT
  }
}

@Controller('parse/notes')
export class NotesController {
  constructor (private readonly notes: NotesService) {}

  @Get('listNotes')
  list (@Query() query: ListNotesQuery) {
    return this.notes.list(query.limit, query.status)
  }

  /** The session row is read on every request. */
  @Get('listNotesSession')
  @UseGuards(SessionGuard)
  listWithSession (@Query() query: ListNotesQuery) {
    return this.notes.list(query.limit, query.status)
  }

  /** A page of the public notes, a cursor to the next page and a count capped at 1000 (the kit's listNotes contract). */
  @Get('listNotesPage')
  page (@Query() query: ListNotesPageQuery) {
    return this.notes.page(query.limit, query.after, null)
  }

  /** The same page for the caller: public notes and the caller's own (the session row read on every request). */
  @Get('listNotesPageSession')
  @UseGuards(SessionGuard)
  pageWithSession (@Query() query: ListNotesPageQuery, @Req() request: { userId?: string }) {
    return this.notes.page(query.limit, query.after, request.userId ?? null)
  }

  @Post('createNote')
  @HttpCode(200)
  create (@Body() input: CreateNoteDto) {
    return this.notes.create(input, null)
  }

  /** The session is looked up once per 5 s per token. */
  @Post('createNoteSession')
  @HttpCode(200)
  @UseGuards(CachedSessionGuard)
  createWithSession (@Body() input: CreateNoteDto, @Req() request: { userId?: string }) {
    return this.notes.create(input, request.userId ?? null)
  }
}
