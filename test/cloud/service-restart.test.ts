/**
 * start:cloud's supervision of a service, as Cloud Run replaces instances: real processes (a tiny
 * server in the place of a service's server.ts, started through the Dockerfile's entry point like
 * the real ones) that crash on request or refuse to start. A crash after ready brings a new
 * instance with a line saying so; a new instance that refuses to start is started again, waiting
 * longer each time, as Cloud Run does; only a crash loop ends supervision, with a reason naming
 * the service (start:cloud then keeps everything else running: platform.ts).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '../../scripts/lib/free-port.ts'
import { startServiceProcess, superviseService, waitHealthy, type SupervisedService } from '../../scripts/lib/cloud/service-processes.ts'
import { cleanUp, ROOT, sleep, tempDir } from './support.ts'

const SERVER = `
import { createServer } from 'node:http'
import { existsSync } from 'node:fs'
if (existsSync(process.env.REFUSE_FILE)) {
  console.error('configuration error: FAKE_SETTING is not valid')
  process.exit(78)
}
createServer((req, res) => {
  if (req.url === '/crash') process.exit(3)
  res.writeHead(200)
  res.end('ok')
}).listen(Number(process.env.PORT), '127.0.0.1')
`

const supervisors: SupervisedService[] = []
afterAll(async () => {
  for (const s of supervisors) await s.stop()
  await cleanUp()
})

async function fakeService(crashLoopBound = { restarts: 5, windowMs: 60_000 }) {
  const root = tempDir('lsv-restart-')
  copyFileSync(join(ROOT, 'Dockerfile'), join(root, 'Dockerfile'))
  mkdirSync(join(root, 'services/fake-svc/src'), { recursive: true })
  writeFileSync(join(root, 'services/fake-svc/src/server.ts'), SERVER)
  const logDir = join(root, 'logs')
  mkdirSync(logDir)
  const port = await freePort()
  const env = { PORT: String(port), REFUSE_FILE: join(root, 'refuse') }
  const start = (continueLogWith?: string) =>
    startServiceProcess({ root, name: 'fake-svc', port, env, logDir, ...(continueLogWith ? { continueLogWith } : {}) })
  const first = start()
  await waitHealthy(first, 30_000)
  const said: string[] = []
  let fatal: string | null = null
  const supervised = superviseService(first, (note) => start(note), {
    say: (line) => said.push(line),
    crashLoop: (reason) => (fatal = reason),
    crashLoopBound,
    backoff: { firstMs: 200, maxMs: 800 },
    startTimeoutMs: 30_000,
  })
  supervisors.push(supervised)
  const crash = async () => {
    const before = supervised.current()
    await fetch(`http://127.0.0.1:${port}/crash`).catch(() => {})
    await before.exited
  }
  const until = async (what: string, probe: () => boolean) => {
    const deadline = Date.now() + 30_000
    while (!probe()) {
      if (Date.now() > deadline) throw new Error(`${what}: not within 30 s; said: ${said.join(' | ')}; fatal: ${fatal}`)
      await sleep(50)
    }
  }
  return { root, port, said, fatal: () => fatal, supervised, crash, until, log: () => readFileSync(join(logDir, 'fake-svc.log'), 'utf8') }
}

describe('start:cloud service supervision (Cloud Run instances)', () => {
  it('a crash after ready gets a new instance, said on the terminal and in the log; the service answers again', async () => {
    const s = await fakeService()
    const firstPid = s.supervised.current().child.pid
    await s.crash()
    // mutation: no restart (the old behaviour, stop on exit) → no line, nothing answers
    await s.until('new instance ready', () => s.said.some((l) => /fake-svc: new instance ready/.test(l)))
    expect(s.said[0]).toMatch(/^fake-svc exited \(code 3\) after it was ready: starting a new instance, as Cloud Run would \(restart 1; log: /)
    expect(s.supervised.current().child.pid).not.toBe(firstPid)
    expect(s.supervised.restarts()).toBe(1)
    expect((await fetch(`http://127.0.0.1:${s.port}/`)).status).toBe(200)
    expect(s.log()).toMatch(/"severity":"WARNING".*the instance exited \(code 3\) after it was ready; starting a new instance/)
    expect(s.fatal()).toBeNull()
  }, 60_000)

  it('a new instance that dies before it is ready is started again, waiting longer each time, until one gets ready (nothing is given up)', async () => {
    const s = await fakeService({ restarts: 10, windowMs: 60_000 })
    writeFileSync(join(s.root, 'refuse'), '')
    await s.crash()
    // the first new instance at once, then 0.2 s, 0.4 s: each dies with exit 78 before /healthz
    await s.until('three instances that did not get ready', () => s.said.filter((l) => /did not get ready/.test(l)).length >= 3)
    rmSync(join(s.root, 'refuse'))
    // mutation: the old behaviour (give up, and start:cloud stopped everything) → never ready again
    await s.until('a new instance ready', () => s.said.some((l) => /fake-svc: new instance ready/.test(l)))
    expect(s.said.filter((l) => /did not get ready/.test(l))[0]).toMatch(
      /^a new instance of fake-svc did not get ready: fake-svc exited with code 78 before it answered \/healthz/,
    )
    const waits = s.said
      .flatMap((l) => /^fake-svc exited \(code 78\) before it was ready: starting a new instance in ([\d.]+) s/.exec(l)?.[1] ?? [])
      .map(Number)
    expect(waits.slice(0, 2)).toEqual([0.2, 0.4])
    expect(s.log()).toMatch(/the instance exited \(code 78\) before it was ready; starting a new instance in 0.2 s/)
    expect((await fetch(`http://127.0.0.1:${s.port}/`)).status).toBe(200)
    expect(s.fatal()).toBeNull()
  }, 60_000)

  it('instances that never get ready end as a crash loop, with the configuration error that stops them', async () => {
    const s = await fakeService({ restarts: 3, windowMs: 60_000 })
    writeFileSync(join(s.root, 'refuse'), '')
    await s.crash()
    await s.until('crash loop', () => s.fatal() !== null)
    expect(s.fatal()).toMatch(/^fake-svc exited \(code 78\): 4 exits within 1 min, a crash loop; not restarted again/)
    expect(s.fatal()).toMatch(/configuration error: FAKE_SETTING is not valid/)
    await sleep(1_000)
    expect(s.supervised.restarts()).toBe(3)
  }, 60_000)

  it('more crashes than the crash-loop bound within the window end supervision as a crash loop', async () => {
    const s = await fakeService({ restarts: 2, windowMs: 60_000 })
    for (let i = 1; i <= 2; i++) {
      await s.crash()
      await s.until(`restart ${i} ready`, () => s.said.filter((l) => /new instance ready/.test(l)).length === i)
    }
    await s.crash()
    // mutation: no bound → a third restart and no fatal
    await s.until('fatal', () => s.fatal() !== null)
    expect(s.fatal()).toMatch(/^fake-svc exited \(code 3\): 3 exits within 1 min, a crash loop; not restarted again/)
    expect(s.supervised.restarts()).toBe(2)
  }, 60_000)
})
