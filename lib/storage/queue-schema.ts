// The PostgreSQL schema holding the queue engine's tables (pg-boss's): the
// engine is opened on it (queue.ts), and a queued run's end completes its job
// there in the statement that records the end (postgres/job-run-start.ts).
export const QUEUE_SCHEMA = 'pgboss'
