import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Writable } from 'node:stream'
import { createLogger } from '@lsv/shared/logging/logger.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import { buildApp } from '../../services/portal-api/src/app.ts'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { mintLink, pathOf, setCookieOf, tokenOf } from './support.ts'

/**
 * Rule 2: "The link's token never appears in logs." portal-api with the production logger at its
 * most verbose level, every line captured.
 */
describe('portal access in the logs', () => {
  let fixture: IngestFixture
  let app: App
  const lines: string[] = []

  beforeAll(async () => {
    fixture = await createIngestFixture()
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean))
        done()
      },
    })
    app = await buildApp({ ...fixture.h.deps, logger: createLogger('trace', 'portal-api', sink) })
  })
  afterAll(async () => {
    await app?.close()
    await fixture?.close()
  })

  it('never logs a sign-in token or a session cookie: followed, refused, reused, with a referer', async () => {
    const { url } = await mintLink(app, fixture.t.account.id)
    const token = tokenOf(url)
    const first = await app.inject({ method: 'GET', url: pathOf(url), headers: { referer: url } })
    expect(first.statusCode).toBe(303)
    const cookie = setCookieOf(first)!.value!
    expect((await app.inject({ method: 'GET', url: pathOf(url) })).statusCode).toBe(410)
    expect((await app.inject({ method: 'GET', url: `${pathOf(url)}&utm_source=mail` })).statusCode).toBe(410)
    const second = await mintLink(app, fixture.t.account.id, { ttl_seconds: 60 })
    expect((await app.inject({ method: 'GET', url: `/portal/sign-in?utm=1&Token=x&token=${tokenOf(second.url)}` })).statusCode).toBe(303)
    expect((await app.inject({ method: 'GET', url: '/portal/', headers: { cookie: `lsv_portal=${cookie}` } })).statusCode).toBe(200)
    expect(
      (await app.inject({ method: 'POST', url: '/portal/sign-out', headers: { cookie: `lsv_portal=${cookie}`, origin: 'http://localhost:8081' } })).statusCode,
    ).toBe(303)

    // the requests were logged (so the check below looks at real lines) …
    const signIns = lines.filter((l) => l.includes('/portal/sign-in'))
    expect(signIns.length).toBeGreaterThanOrEqual(4)
    expect(signIns.some((l) => l.includes('/portal/sign-in?token=[redacted]'))).toBe(true)
    // … and no line holds either secret
    for (const secret of [token, tokenOf(second.url), cookie]) {
      expect(lines.filter((l) => l.includes(secret))).toEqual([])
    }
  })
})
