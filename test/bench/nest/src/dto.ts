// Request shapes, validated by class-validator through Nest's ValidationPipe.
import { Type } from 'class-transformer'
import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, MaxLength, Min } from 'class-validator'

export const NOTE_STATUSES = ['draft', 'published']

export class CreateNoteDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  title: string

  @IsOptional()
  @IsString()
  @MaxLength(10_000)
  body?: string

  @IsOptional()
  @IsIn(NOTE_STATUSES)
  status?: string
}

export class ListNotesQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  limit?: number

  @IsOptional()
  @IsIn(NOTE_STATUSES)
  status?: string
}

/** The paged list: `after` is the `next` of the page before. */
export class ListNotesPageQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  limit?: number

  @IsOptional()
  @IsString()
  @MaxLength(200)
  after?: string
}
