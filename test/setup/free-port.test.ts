import { afterEach, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type Server } from 'node:net'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { portRange } from '../../scripts/lib/free-port.ts'

/**
 * The one way tests and scripts pick a port for a server started later by number
 * (scripts/lib/free-port.ts). Each "worker" here is a process of its own with the pool id vitest
 * gives its workers: it takes ports without binding them (as a test that hands them to a stack
 * does) and keeps them until it is told to exit.
 */

const HELPER = pathToFileURL(join(import.meta.dirname, '..', '..', 'scripts', 'lib', 'free-port.ts')).href
const running: ChildProcess[] = []

afterEach(async () => {
  for (const child of running.splice(0)) {
    if (child.exitCode === null) {
      child.stdin?.end()
      await once(child, 'exit')
    }
  }
})

interface Worker {
  ports: number[]
  exit(): Promise<void>
}

/** A process with VITEST_POOL_ID `poolId` that takes `count` ports and holds them until exit(). */
async function worker(poolId: number, count: number): Promise<Worker> {
  const code = `
    const { freePort } = await import(${JSON.stringify(HELPER)})
    const ports = []
    for (let i = 0; i < ${count}; i++) ports.push(await freePort())
    process.stdout.write(JSON.stringify(ports) + '\\n')
    process.stdin.resume()
    process.stdin.on('end', () => process.exit(0))`
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    env: { ...process.env, VITEST_POOL_ID: String(poolId) },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  running.push(child)
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  while (!out.includes('\n')) {
    if (child.exitCode !== null) throw new Error(`worker ${poolId} exited with ${child.exitCode}`)
    await Promise.race([once(child.stdout!, 'data'), once(child, 'exit')])
  }
  return {
    ports: JSON.parse(out) as number[],
    async exit() {
      child.stdin!.end()
      if (child.exitCode === null) await once(child, 'exit')
    },
  }
}

function ephemeral(): [number, number] {
  return readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number, number]
}

describe('free ports (scripts/lib/free-port.ts)', () => {
  it('two workers taking ports at the same time never get the same one, and none is in the kernel ephemeral range', async () => {
    const [a, b] = await Promise.all([worker(1, 30), worker(2, 30)])
    const all = [...a.ports, ...b.ports]
    expect(new Set(all).size).toBe(all.length)
    const [low, high] = ephemeral()
    expect(all.filter((p) => p >= low && p <= high)).toEqual([])
    const range = portRange({ low, high })
    expect(all.every((p) => p >= range.low && p <= range.high)).toBe(true)
  })

  it('two processes of one worker (a test and the stack it starts inherit one pool id) never get the same port either', async () => {
    const [a, b] = await Promise.all([worker(1, 30), worker(1, 30)])
    const all = [...a.ports, ...b.ports]
    expect(new Set(all).size).toBe(all.length)
  })

  it('a port some other server listens on is skipped, and an exited worker gives its ports back', async () => {
    const first = await worker(40, 1)
    const port = first.ports[0]!
    await first.exit()
    // nobody holds it now: the same worker block starts there again
    const again = await worker(40, 1)
    expect(again.ports).toEqual([port])
    await again.exit()
    const busy: Server = createServer()
    busy.listen(port, '127.0.0.1')
    await once(busy, 'listening')
    try {
      const next = await worker(40, 1)
      expect(next.ports[0]).not.toBe(port)
    } finally {
      busy.close()
    }
  })
})
