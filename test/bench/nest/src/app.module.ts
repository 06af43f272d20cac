import { Module, type DynamicModule } from '@nestjs/common'
import { TypeOrmModule } from '@nestjs/typeorm'
import { BenchController, NotesController } from './controllers'
import { Note } from './note.entity'
import { NotesService } from './notes.service'
import { CachedSessionGuard, SessionGuard } from './session.guard'
import { Session } from './session.entity'

@Module({})
export class AppModule {
  static forDatabase (url: string): DynamicModule {
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url, entities: [Note, Session], synchronize: true, logging: false }),
        TypeOrmModule.forFeature([Note, Session])
      ],
      controllers: [BenchController, NotesController],
      providers: [NotesService, SessionGuard, CachedSessionGuard]
    }
  }
}
