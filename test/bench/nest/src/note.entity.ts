// The Note row, as a TypeORM entity: the same fields the kit's Note class has.
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm'

@Entity('note')
// The paged list's order (newest first, id breaking ties), as the kit's Note declares its createdAt index.
@Index(['createdAt', 'id'])
export class Note {
  @PrimaryGeneratedColumn()
  id: number

  @Column({ type: 'varchar', length: 200 })
  title: string

  @Column({ type: 'text', nullable: true })
  body: string | null

  @Column({ type: 'varchar', default: 'draft' })
  status: string

  @Index({ unique: true })
  @Column({ type: 'varchar' })
  slug: string

  @Column({ type: 'int', default: 0 })
  views: number

  @Column({ type: 'varchar', nullable: true })
  ownerId: string | null

  @Column({ type: 'boolean', default: false })
  publicRead: boolean

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date
}
