import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import type { App } from '@lsv/shared/http/base-app.ts'
import { buildApp } from '../../services/portal-api/src/app.ts'
import { freePort } from '../../scripts/lib/free-port.ts'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { seedContact } from '../links/fixtures.ts'
import { OPERATOR } from '../management/harness.ts'

const run = promisify(execFile)

/**
 * Portal access over real HTTP, as clients meet it: fetch without following redirects (to see the
 * 303 and its Set-Cookie), curl, and Python's urllib with a cookie jar following the redirect
 * like a browser.
 */
describe('portal access over HTTP', () => {
  let fixture: IngestFixture
  let app: App
  let origin: string

  const mintLink = async (): Promise<string> => {
    const res = await fetch(`${origin}/api/v1/admin/accounts/${fixture.t.account.id}/portal-links`, {
      method: 'POST',
      headers: { ...OPERATOR, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(res.status).toBe(201)
    return ((await res.json()) as { url: string }).url
  }

  beforeAll(async () => {
    const port = await freePort()
    origin = `http://127.0.0.1:${port}`
    fixture = await createIngestFixture({ config: { portalBaseUrl: origin } })
    app = await buildApp(fixture.h.deps)
    await app.listen({ host: '127.0.0.1', port })
  })
  afterAll(async () => {
    await app?.close()
    await fixture?.close()
  })

  it('fetch: the link answers 303 with the cookie once; the cookie signs the landing page in and mints same-origin only', async () => {
    const url = await mintLink()
    expect(url.startsWith(`${origin}/portal/sign-in?token=`)).toBe(true)
    const first = await fetch(url, { redirect: 'manual' })
    expect(first.status).toBe(303)
    expect(first.headers.get('location')).toBe('/portal/')
    const [setCookie, ...more] = first.headers.getSetCookie()
    expect(more).toEqual([])
    expect(setCookie).toMatch(/^lsv_portal=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax$/)
    const cookie = setCookie!.split(';')[0]!

    const again = await fetch(url, { redirect: 'manual' })
    expect(again.status).toBe(410)
    expect(again.headers.getSetCookie()).toEqual([])
    expect(await again.text()).toContain('This sign-in link has expired')

    const page = await fetch(`${origin}/portal/`, { headers: { cookie } })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain(`<code>${fixture.t.publicId}</code>`)

    const contactId = await seedContact(fixture.h.deps, fixture.t.account.id, 'crm', 'http-1')
    const mint = (headers: Record<string, string>) =>
      fetch(`${origin}/api/contacts/links`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, ...headers },
        body: JSON.stringify({ destinationUrl: 'https://example.com/', contactId }),
      })
    expect((await mint({ origin })).status).toBe(200)
    expect((await mint({})).status).toBe(401)
    expect((await mint({ origin: 'https://evil.example' })).status).toBe(401)
  })

  it('curl: the second request of one link gets no cookie', async () => {
    const url = await mintLink()
    const once = await run('curl', ['-sS', '-o', '/dev/null', '-D', '-', url])
    expect(once.stdout).toMatch(/^HTTP\/1\.1 303/)
    expect(once.stdout).toMatch(/^set-cookie: lsv_portal=/im)
    const twice = await run('curl', ['-sS', '-o', '/dev/null', '-D', '-', url])
    expect(twice.stdout).toMatch(/^HTTP\/1\.1 410/)
    expect(twice.stdout).not.toMatch(/set-cookie/i)
  })

  it('urllib with a cookie jar follows the link to a signed-in landing page, and signs out through the form', async () => {
    const url = await mintLink()
    const script = `
import sys, urllib.request, http.cookiejar
jar = http.cookiejar.CookieJar()
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
res = opener.open(sys.argv[1])
print(res.status, res.geturl())
print(res.read().decode())
req = urllib.request.Request(sys.argv[2] + '/portal/sign-out', data=b'', method='POST', headers={'Origin': sys.argv[2], 'Content-Type': 'application/x-www-form-urlencoded'})
res = opener.open(req)
print(res.status, res.geturl())
print(res.read().decode())
`
    const { stdout } = await run('python3', ['-c', script, url, origin])
    const [signedIn, signedOut] = stdout.split(/^200 /m).filter(Boolean)
    expect(signedIn).toContain(`${origin}/portal/`)
    expect(signedIn).toContain(`<code>${fixture.t.publicId}</code>`)
    expect(signedOut).toContain(`${origin}/portal/`)
    expect(signedOut).toContain('Not signed in')
  })
})
