import { describe, expect, it } from 'vitest'
import { runBench } from './support/run-bench.ts'

/**
 * bench:portal (bench/portal.ts) at a small scale (BENCH_SMALL=1: 120 contacts, deliveries and
 * audit entries, 2 requests a page), so the benchmark cannot rot between its full runs. Nothing
 * about time is asserted: only that it runs to the end and times what it says it times.
 */
describe('bench:portal, small scale', () => {
  it('fills the account, walks every GET screen of the route table and its later pages, and gives each a verdict', async () => {
    const stdout = await runBench(['bench/portal.ts'], { BENCH_SMALL: '1' }, { timeoutMs: 120_000, maxBufferBytes: 64 * 1024 * 1024 })
    const rows = stdout.split('\n').filter((l) => / (PASS|FAIL)$/.test(l))
    const timed = (label: string) => rows.some((l) => l.startsWith(`${label} `))
    // screens from the route table, parameters filled (mutation, tried: isScreen matching
    // '/portal/' only drops the contact page at /contacts/:contactId)
    for (const route of ['/portal/contacts', '/portal/audit', '/portal/activity', '/portal/webhooks/:integrationId', '/contacts/:contactId']) {
      expect(timed(route), route).toBe(true)
    }
    // the pages behind each list's own "next" link (mutation: laterPageLink not knowing `cursor=` drops the first)
    expect(timed('/portal/contacts: next page (its own link)')).toBe(true)
    expect(timed('/portal/audit: next page (its own link)')).toBe(true)
    expect(stdout).toMatch(/filled 120 contacts in .*\nfilled 120 deliveries over 2 endpoints in .*\nfilled 120 audit entries in /)
    expect(stdout).toMatch(/\n(PASS: every screen|FAIL: \d+ screen)/)
  })
})
