// A leaf, so both databases' lease code and the neutral front can name it.
/** claimed: this instance runs the tick · taken: another instance has it · busy: the last run still holds the lease (skip). */
export type LeaseClaim = 'claimed' | 'taken' | 'busy'
