/**
 * The whole-exchange deadline of a webhook send (adapters/outbound-http/deadlines.ts, used by
 * send.ts), with a short bound against real loopback receivers: a silent receiver, one that sends
 * its headers and then nothing, and a send that waits in the pool's queue past its deadline. At
 * the real 15 s bound the same receivers are test/reliability/webhook-receivers.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Agent } from 'undici'
import { createDeadlines, type Expiring } from '@lsv/shared/adapters/outbound-http/deadlines.ts'
import { postOnce } from '@lsv/shared/adapters/outbound-http/send.ts'
import { HANG, startHostileReceiver } from '../reliability/support/hostile-receiver.ts'

const receivers: Array<{ close(): Promise<void> }> = []
const agents: Agent[] = []
afterAll(async () => {
  for (const a of agents) await a.destroy()
  for (const r of receivers) await r.close()
})

async function receiver(behaviour: Parameters<typeof startHostileReceiver>[0]) {
  const r = await startHostileReceiver(behaviour)
  receivers.push(r)
  return r
}
function agent(connections = 8) {
  const a = new Agent({ connections })
  agents.push(a)
  return a
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('the shared deadline sweep', () => {
  function item(log: string[], name: string, fail = false): Expiring {
    return {
      expire() {
        log.push(name)
        if (fail) throw new Error(`${name} failed to stop`)
      },
    }
  }

  it('expires each item once, in the order added, only once its bound has passed', async () => {
    let now = 0
    const d = createDeadlines({ boundMs: 100, everyMs: 5, now: () => now })
    const log: string[] = []
    d.add(item(log, 'a'))
    now = 10
    d.add(item(log, 'b'))
    now = 99
    await sleep(30)
    expect(log).toEqual([])
    now = 100
    await sleep(30)
    expect(log).toEqual(['a'])
    now = 500
    await sleep(30)
    expect(log).toEqual(['a', 'b'])
    expect(d.size).toBe(0)
    expect(d.sweeping).toBe(false)
  })

  it('never expires an item removed in time, and one item that throws does not keep the next past its bound', async () => {
    let now = 0
    const d = createDeadlines({ boundMs: 100, everyMs: 5, now: () => now })
    const log: string[] = []
    const kept = item(log, 'answered')
    d.add(kept)
    d.add(item(log, 'throws', true))
    d.add(item(log, 'next'))
    d.remove(kept)
    d.remove(item(log, 'never added'))
    now = 100
    await sleep(30)
    expect(log).toEqual(['throws', 'next'])
  })

  it('sets its interval only while something is under way', async () => {
    const d = createDeadlines({ boundMs: 1000, everyMs: 5 })
    expect(d.sweeping).toBe(false)
    const one = item([], 'one')
    d.add(one)
    expect(d.sweeping).toBe(true)
    d.remove(one)
    await sleep(30)
    expect(d.sweeping).toBe(false)
  })
})

describe('a send at its deadline', () => {
  const BOUND_MS = 300
  /** how late an answer may come past its bound on a loaded machine (the sweep itself looks every 10 ms) */
  const LATE_MS = 2_000

  it('a receiver that never answers: a timeout within the bound and a sweep, and the connection dropped', async () => {
    const r = await receiver(HANG)
    const deadlines = createDeadlines({ boundMs: BOUND_MS, everyMs: 10 })
    const answer = await postOnce(agent(), r.url, Buffer.from('{}'), {}, deadlines)
    expect(answer).toMatchObject({ statusCode: null, error: 'timeout', excerpt: null })
    expect(answer.latencyMs).toBeGreaterThanOrEqual(BOUND_MS - 5)
    expect(answer.latencyMs).toBeLessThan(BOUND_MS + LATE_MS)
    for (let i = 0; i < 50 && r.stats.closedByClient === 0; i++) await sleep(10)
    expect(r.stats.closedByClient).toBe(1)
  })

  it('a receiver that sends its status and then nothing: the status is the answer, with what arrived, and the connection dropped', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(503, { 'retry-after': '9' })
      res.write('partial')
    })
    const deadlines = createDeadlines({ boundMs: BOUND_MS, everyMs: 10 })
    const answer = await postOnce(agent(), r.url, Buffer.from('{}'), {}, deadlines)
    expect(answer).toMatchObject({ statusCode: 503, error: null, excerpt: 'partial', retryAfter: '9' })
    expect(answer.latencyMs).toBeLessThan(BOUND_MS + LATE_MS)
    for (let i = 0; i < 50 && r.stats.closedByClient === 0; i++) await sleep(10)
    expect(r.stats.closedByClient).toBe(1)
  })

  it('a send queued behind a silent one past its deadline: answered as a timeout, and never sent', async () => {
    const r = await receiver(HANG)
    const one = agent(1)
    // the first send holds the pool's one connection well past the second's deadline (a bound of
    // its own): the second is still queued when its deadline passes, whatever the machine's load
    const first = postOnce(one, r.url, Buffer.from('{"n":1}'), {}, createDeadlines({ boundMs: BOUND_MS + 2 * LATE_MS, everyMs: 10 }))
    const queued = await postOnce(one, r.url, Buffer.from('{"n":2}'), {}, createDeadlines({ boundMs: BOUND_MS, everyMs: 10 }))
    expect(queued.error).toBe('timeout')
    // answered at its own deadline, not when the first one's ended
    expect(queued.latencyMs).toBeLessThan(BOUND_MS + LATE_MS)
    expect((await first).error).toBe('timeout')
    // the pool hands the queued send a socket once the first is dropped: it hangs up at once
    await sleep(200)
    expect(r.stats.requests).toBe(1)
  })
})
