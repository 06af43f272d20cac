// Whether a redis-server on loopback answers PING, without a Redis client (tests start their own servers).
import { connect } from 'node:net'

export async function redisAnswers (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.setTimeout(1_000, () => { socket.destroy(); resolve(false) })
    socket.on('error', () => resolve(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (data) => { socket.destroy(); resolve(data.toString().startsWith('+PONG')) })
  })
}
