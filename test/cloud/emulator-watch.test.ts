/**
 * start:cloud notices an emulator that died (issue 31): one clear line naming it, saying that its
 * in-memory data is gone and that it is not started again, and nothing else stopped. A tiny HTTP
 * server plays the emulator's address (both emulators answer plain HTTP there); it is closed as
 * an emulator dies, and opened again as one a developer restarts.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { watchEmulators, type EmulatorWatch } from '../../scripts/lib/cloud/emulator-watch.ts'
import { sleep } from './support.ts'

const servers: Server[] = []
let watch: EmulatorWatch | null = null
afterAll(async () => {
  watch?.stop()
  for (const s of servers) await new Promise((r) => s.close(r))
})

async function fakeEmulator(port = 0): Promise<Server> {
  const server = createServer((_req, res) => res.end('Ok'))
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return server
}

describe('start:cloud watching its emulators', () => {
  it('says once that a dead emulator lost its data and is not restarted, and says when it answers again', async () => {
    const firestore = await fakeEmulator()
    let pubsub = await fakeEmulator()
    const pubsubPort = (pubsub.address() as AddressInfo).port
    const said: string[] = []
    watch = watchEmulators({ firestore: `127.0.0.1:${(firestore.address() as AddressInfo).port}`, pubsub: `127.0.0.1:${pubsubPort}` }, (l) => said.push(l), 50)
    await sleep(300)
    expect(said).toEqual([])
    pubsub.closeAllConnections()
    await new Promise((r) => pubsub.close(r))
    // mutation: no watch (the old start:cloud) → nothing said
    for (let i = 0; i < 100 && said.length === 0; i++) await sleep(50)
    expect(said).toHaveLength(1)
    expect(said[0]).toMatch(
      new RegExp(`^the pubsub emulator at 127\\.0\\.0\\.1:${pubsubPort} does not answer: it has died, and the data it held in memory with it`),
    )
    expect(said[0]).toMatch(/cannot start it again without losing that data, so it does not; the services now answer 503 on \/readyz/)
    await sleep(300)
    expect(said).toHaveLength(1) // said once, not every interval
    pubsub = await fakeEmulator(pubsubPort)
    for (let i = 0; i < 100 && said.length === 1; i++) await sleep(50)
    expect(said[1]).toMatch(/^the pubsub emulator at .* answers again \(empty if it was restarted/)
  }, 30_000)
})
