// A request written byte for byte on a TCP socket: what fetch and inject would
// normalise (absolute-form targets, backslashes, odd encodings) reaches the server as sent.
import net from 'node:net'

export interface RawResult {
  status: number
  headers: Record<string, string>
  body: string
  json: any
}

export function rawRequest (port: number, requestLine: string, headers: Record<string, string> = {}, body?: string): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const lines = [requestLine, 'Host: 127.0.0.1', 'Connection: close']
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`)
    if (body !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'transfer-encoding')) lines.push(`Content-Length: ${Buffer.byteLength(body)}`)
    socket.on('connect', () => socket.write(lines.join('\r\n') + '\r\n\r\n' + (body ?? '')))
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const headerEnd = text.indexOf('\r\n\r\n')
      const head = text.slice(0, headerEnd === -1 ? text.length : headerEnd).split('\r\n')
      const status = Number(head[0]?.split(' ')[1] ?? 0)
      const parsed: Record<string, string> = {}
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':')
        if (colon > 0) parsed[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
      }
      let payload = headerEnd === -1 ? '' : text.slice(headerEnd + 4)
      if (parsed['transfer-encoding'] === 'chunked') payload = dechunk(payload)
      let json: unknown
      try { json = payload ? JSON.parse(payload) : undefined } catch { json = undefined }
      resolve({ status, headers: parsed, body: payload, json })
    })
  })
}

function dechunk (payload: string): string {
  let out = ''
  let rest = payload
  while (rest.length > 0) {
    const lineEnd = rest.indexOf('\r\n')
    if (lineEnd === -1) break
    const size = parseInt(rest.slice(0, lineEnd), 16)
    if (!size) break
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size)
    rest = rest.slice(lineEnd + 2 + size + 2)
  }
  return out
}
