// A login session: what a session token resolves to.
import { Column, Entity, PrimaryColumn } from 'typeorm'

@Entity('session')
export class Session {
  @PrimaryColumn({ type: 'varchar' })
  token: string

  @Column({ type: 'varchar' })
  userId: string

  @Column({ type: 'timestamptz' })
  expiresAt: Date
}
