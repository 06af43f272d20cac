// How many WebSocket clients Parse's LiveQuery server holds and how many
// subscriptions they opened. Parse keeps both in its server's private maps
// (`clients`, each client's `subscriptionInfos`); reading them here, and only
// here, is pinned by test/parse-contract.test.ts.

interface LiveQueryServerShape {
  clients?: Map<unknown, { subscriptionInfos?: Map<unknown, unknown> }>
}

export interface LiveQueryStats { connections: number, subscriptions: number }

export function liveQueryStats (server: unknown): LiveQueryStats {
  const clients = (server as LiveQueryServerShape).clients
  if (!(clients instanceof Map)) return { connections: 0, subscriptions: 0 }
  let subscriptions = 0
  for (const client of clients.values()) subscriptions += client.subscriptionInfos instanceof Map ? client.subscriptionInfos.size : 0
  return { connections: clients.size, subscriptions }
}
