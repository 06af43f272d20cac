// Parse Server modules the cluster wiring reaches beyond the package's main export.
declare module 'parse-server/lib/Adapters/PubSub/RedisPubSub.js' {
  export const RedisPubSub: {
    createPublisher (config: { redisURL: string, redisOptions?: Record<string, unknown> }): unknown
    createSubscriber (config: { redisURL: string, redisOptions?: Record<string, unknown> }): unknown
  }
}
declare module 'parse-server/lib/triggers.js' {
  const triggers: {
    Types: Record<'afterSave' | 'afterDelete', string>
    getTrigger (className: string, triggerType: string, applicationId: string): ((request: unknown) => unknown) | undefined
    getValidator (name: string, applicationId: string): unknown
    removeTrigger (type: string, className: string, applicationId: string): void
    addTrigger (type: string, className: string, handler: (request: unknown) => unknown, applicationId: string, validator?: unknown): void
  }
  export default triggers
}
