import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_LOGO_BYTES, sniffLogo } from '@lsv/shared/domain/tenants/logo.ts'
import { setPortalBranding } from '@lsv/shared/domain/tenants/branding.ts'
import { freePort } from '../../scripts/lib/free-port.ts'
import { emulators } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { firstResponse, rawConnect, within } from '../http/support/raw.ts'
import { signIn } from './support.ts'
import { GIF_1x1, JPEG_48x24, pngOfSize, solidPng, SVG_WITH_SCRIPT, WEBP_48x24, WEBP_LOSSLESS_1x1, WEBP_LOSSY_1x1 } from './logo-fixtures.ts'

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

/**
 * Issue 22, job 9, the tenant's logo (docs/portal.md, "Branding"), over real HTTP as a browser
 * sends it: `fetch` with a `FormData` body (multipart/form-data, the file as a Blob with the
 * client's type and name), without following redirects. The bytes decide the type; the answer is
 * always a 303 (saved, or back to the field with the refusal); the image is served only to the
 * signed-in account, with headers that keep it an image. The unit part (sniffLogo) covers the
 * header parsing of each format. The browser side: test/browser/branding.test.ts.
 */
describe('portal branding: the logo', () => {
  let h: Harness
  let tenant: ManagedTenant
  let other: ManagedTenant
  let origin = ''
  let port = 0
  let cookie = ''
  let otherCookie = ''
  const name = `Logo Co ${Math.random().toString(36).slice(2, 8)}`

  beforeAll(async () => {
    port = await freePort()
    origin = `http://127.0.0.1:${port}`
    h = await createHarness({ config: { portalBaseUrl: origin } })
    tenant = await createTestTenant({ managementApi: h.portal, deps: h.deps }, { ...ACCOUNT_ONLY, name })
    other = await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY)
    cookie = await signIn(h.portal, tenant.accountId)
    otherCookie = await signIn(h.portal, other.accountId)
    await h.portal.listen({ host: '127.0.0.1', port })
  })
  afterAll(async () => {
    await tenant?.cleanup()
    await other?.cleanup()
    await h?.close()
  })

  /** the Settings form's upload, as a browser builds it */
  const upload = (bytes: Uint8Array, type: string, fileName: string, headers: Record<string, string> = { cookie, origin }) => {
    const form = new FormData()
    form.append('logo', new Blob([Buffer.from(bytes)], { type }), fileName)
    return fetch(`${origin}/portal/settings/logo`, { method: 'POST', body: form, headers, redirect: 'manual' })
  }
  const get = (path: string, who = cookie) => fetch(`${origin}${path}`, { headers: { cookie: who }, redirect: 'manual' })
  const logoOf = async (accountId = tenant.accountId) => (await h.deps.tenants.getAccount(accountId))?.portal_logo ?? null
  const header = (page: string) => page.slice(page.indexOf('<header'), page.indexOf('</header>'))

  it('sniffLogo: the magic bytes decide, and the size comes from each format’s header', () => {
    // mutation: reading the size from the wrong offsets (or one format's parser for another) fails these
    expect(sniffLogo(solidPng(48, 24))).toEqual({ content_type: 'image/png', width: 48, height: 24 })
    expect(sniffLogo(JPEG_48x24)).toEqual({ content_type: 'image/jpeg', width: 48, height: 24 })
    expect(sniffLogo(WEBP_48x24)).toEqual({ content_type: 'image/webp', width: 48, height: 24 })
    expect(sniffLogo(WEBP_LOSSY_1x1)).toEqual({ content_type: 'image/webp', width: 1, height: 1 })
    expect(sniffLogo(WEBP_LOSSLESS_1x1)).toEqual({ content_type: 'image/webp', width: 1, height: 1 })
    expect(sniffLogo(GIF_1x1)).toBe('not-an-image')
    expect(sniffLogo(SVG_WITH_SCRIPT)).toBe('not-an-image')
    // mutation: `>=` for `>` in the side check refuses 1024; dropping the check lets 1025 through
    expect(sniffLogo(solidPng(1024, 1))).toMatchObject({ width: 1024 })
    expect(sniffLogo(solidPng(1, 1025))).toBe('dimensions')
    // a PNG cut off before its header's size is not guessed at
    expect(sniffLogo(solidPng(4, 4).subarray(0, 20))).toBe('dimensions')
    expect(sniffLogo(new Uint8Array())).toBe('empty')
    // mutation: `>=` for `>` in the byte limit refuses exactly 64 KiB
    expect(sniffLogo(pngOfSize(MAX_LOGO_BYTES))).toMatchObject({ content_type: 'image/png' })
    expect(sniffLogo(pngOfSize(MAX_LOGO_BYTES + 1))).toBe('too-large')
  })

  it('a PNG is stored (303), shown in the header of every screen, and served with headers that keep it an image', async () => {
    const png = solidPng(48, 24)
    const saved = await upload(png, 'image/png', 'logo.png')
    expect(saved.status).toBe(303)
    expect(saved.headers.get('location')).toBe('/portal/settings?flash=logo-saved')
    const id = sha256(png)
    // the account keeps the reference only; mutation: storing the bytes on the account fails this
    expect(await logoOf()).toEqual({ id, content_type: 'image/png', size: png.length })

    for (const screen of ['/portal/settings?flash=logo-saved', '/portal/connections']) {
      const page = await (await get(screen)).text()
      // mutation: the layout without the logo (or with another alt) fails this
      expect(header(page), screen).toContain(`<img class="logo" src="/portal/assets/logo/${id}" alt="${name}">`)
    }

    const image = await get(`/portal/assets/logo/${id}`)
    expect(image.status).toBe(200)
    expect(Buffer.from(await image.arrayBuffer()).equals(png)).toBe(true)
    expect(image.headers.get('content-type')).toBe('image/png')
    // mutation: dropping any of these headers fails its line
    expect(image.headers.get('x-content-type-options')).toBe('nosniff')
    expect(image.headers.get('cache-control')).toBe('private, max-age=31536000, immutable')
    expect(image.headers.get('content-security-policy')).toBe("default-src 'none'")
  })

  it('JPEG and WebP are stored with their own types; each replaces the previous image, which is deleted', async () => {
    const before = (await logoOf())!
    for (const [bytes, type] of [
      [JPEG_48x24, 'image/jpeg'],
      [WEBP_48x24, 'image/webp'],
    ] as const) {
      const previous = (await logoOf())!
      expect((await upload(bytes, type, 'logo')).status).toBe(303)
      const now = (await logoOf())!
      expect(now).toEqual({ id: sha256(bytes), content_type: type, size: bytes.length })
      const served = await get(`/portal/assets/logo/${now.id}`)
      expect(served.headers.get('content-type')).toBe(type)
      // mutation: keeping replaced images fails this (and leaves bytes nobody points at)
      expect(await h.deps.brandAssets.get(tenant.accountId, previous.id)).toBeNull()
      expect((await get(`/portal/assets/logo/${previous.id}`)).status).toBe(404)
    }
    expect(before.content_type).toBe('image/png')
  })

  it("the client's type and file name are not believed: a PNG sent as image/gif named .gif is stored as PNG", async () => {
    const png = solidPng(16, 16, '#c2410c')
    expect((await upload(png, 'image/gif', 'logo.gif')).status).toBe(303)
    // mutation: taking the part's mimetype (or the extension) stores image/gif
    expect(await logoOf()).toEqual({ id: sha256(png), content_type: 'image/png', size: png.length })
    expect((await get(`/portal/assets/logo/${sha256(png)}`)).headers.get('content-type')).toBe('image/png')
  })

  it('SVG, GIF, text called image/png, an oversized picture and 64 KiB + 1 are refused in words next to the field; nothing changes', async () => {
    const kept = await logoOf()
    const cases = [
      [SVG_WITH_SCRIPT, 'image/svg+xml', 'logo.svg', 'not-an-image', 'not a PNG, JPEG or WebP image'],
      [GIF_1x1, 'image/gif', 'logo.gif', 'not-an-image', 'not a PNG, JPEG or WebP image'],
      [Buffer.from('just some text, not an image'), 'image/png', 'logo.png', 'not-an-image', 'not a PNG, JPEG or WebP image'],
      [solidPng(1100, 20), 'image/png', 'wide.png', 'dimensions', 'larger than 1024 × 1024 pixels'],
      [pngOfSize(MAX_LOGO_BYTES + 1), 'image/png', 'big.png', 'too-large', 'larger than 64 KiB'],
    ] as const
    for (const [bytes, type, fileName, code, words] of cases) {
      const refused = await upload(bytes, type, fileName)
      expect(refused.status, fileName).toBe(303)
      // mutation (tried): sniffLogo taking unknown bytes for a PNG stores the SVG; believing the
      // part's content type stores the text
      expect(refused.headers.get('location'), fileName).toBe(`/portal/settings?logo_problem=${code}#brand-logo`)
      const page = await (await get(`/portal/settings?logo_problem=${code}`)).text()
      expect(page, fileName).toContain(words)
      expect(page).toMatch(/id="brand-logo"[^>]*aria-invalid="true"/)
      expect(await logoOf(), fileName).toEqual(kept)
    }
    // exactly 64 KiB is accepted: the limit is the file's, not a few bytes short of it
    const full = pngOfSize(MAX_LOGO_BYTES)
    expect((await upload(full, 'image/png', 'full.png')).headers.get('location')).toBe('/portal/settings?flash=logo-saved')
    expect((await logoOf())?.size).toBe(MAX_LOGO_BYTES)
    // a code the portal does not know shows nothing (a URL cannot put words on the screen)
    expect(await (await get('/portal/settings?logo_problem=%3Cb%3Ehi')).text()).not.toContain('brand-logo-error')
  })

  it('anonymous and cross-origin uploads are refused before the body is read', async () => {
    const kept = await logoOf()
    const png = solidPng(8, 8)
    // mutation: an upload route outside the screens' scope (no session hook) answers these otherwise
    expect((await upload(png, 'image/png', 'a.png', { origin })).status).toBe(401)
    expect((await upload(png, 'image/png', 'a.png', { cookie, origin: 'https://evil.example' })).status).toBe(403)
    expect((await upload(png, 'image/png', 'a.png', { cookie })).status).toBe(403)
    expect(await logoOf()).toEqual(kept)

    // declared 1 MiB, a few bytes sent: the answer comes without the rest of the body
    for (const [headers, status] of [
      [`origin: ${origin}\r\n`, 401],
      [`cookie: ${cookie}\r\norigin: https://evil.example\r\n`, 403],
    ] as const) {
      const raw = await rawConnect(port)
      await raw.write(
        `POST /portal/settings/logo HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${headers}content-type: multipart/form-data; boundary=xyz\r\ncontent-length: 1048576\r\n\r\n--xyz\r\n`,
      )
      const answered = await within(
        new Promise<string>((resolve) => {
          const poll = setInterval(() => {
            if (firstResponse(raw.received())) {
              clearInterval(poll)
              resolve(raw.received())
            }
          }, 20)
        }),
        10_000,
        '',
      )
      // mutation (tried): the session check as a preHandler with the plugin's attachFieldsToBody
      // (which reads the whole body before that hook) leaves these unanswered
      expect(firstResponse(answered)?.status).toBe(status)
      raw.socket.destroy()
    }
  })

  it("the image is the signed-in account's own: another account's hash is 404, no session 401", async () => {
    const { id } = (await logoOf())!
    // mutation: looking the image up by hash alone (not within the session's account) serves it
    expect((await get(`/portal/assets/logo/${id}`, otherCookie)).status).toBe(404)
    expect((await get(`/portal/assets/logo/${id}`, '')).status).toBe(401)
    expect((await get('/portal/assets/logo/not-a-hash')).status).toBe(400)
    expect((await get(`/portal/assets/logo/${id}`)).status).toBe(200)
  })

  it('the branding form keeps the logo', async () => {
    const kept = await logoOf()
    const form = new URLSearchParams({ display_name: 'Renamed', accent: '#2f6fd6' })
    const saved = await fetch(`${origin}/portal/settings/branding`, { method: 'POST', body: form, headers: { cookie, origin }, redirect: 'manual' })
    expect(saved.status).toBe(303)
    // mutation (tried): setPortalBranding writing only the name and colour drops the logo
    expect(await logoOf()).toEqual(kept)
    expect(header(await (await get('/portal/')).text())).toContain('alt="Renamed"')
  })

  it('a branding save that read the account before an upload does not put the old logo back', async () => {
    const kept = await logoOf()
    // the form's read of the account, taken before the upload below commits (two tabs, one moment)
    const stale = await h.deps.tenants.getAccount(tenant.accountId)
    const replaced = await upload(solidPng(40, 20, '#0f766e'), 'image/png', 'new.png')
    expect(replaced.status).toBe(303)
    const fresh = await logoOf()
    expect(fresh?.id).not.toBe(kept?.id)
    const tenants = new Proxy(h.deps.tenants, {
      get: (target, prop, receiver) => (prop === 'getAccount' ? async () => stale : Reflect.get(target, prop, receiver)),
    })
    await setPortalBranding({ ...h.deps, tenants }, tenant.accountId, { display_name: 'Renamed again', accent: '#2f6fd6' })
    // mutation: the branding write carrying the logo it read (the logo inside portal_branding, as
    // first built) puts back the old id, whose bytes the upload deleted: the header's image 404s
    expect(await logoOf()).toEqual(fresh)
    expect((await get(`/portal/assets/logo/${fresh!.id}`)).status).toBe(200)
  })

  it('removal asks first (a GET page), then removes on the confirmed post (303); both changes are audited', async () => {
    const { id } = (await logoOf())!
    const question = await get('/portal/settings/logo/delete')
    expect(question.status).toBe(200)
    const asked = await question.text()
    expect(asked).toContain('Remove the logo?')
    expect(asked).toContain('<input type="hidden" name="confirm" value="yes">')
    // a post without the confirmation does nothing but send to the question
    const post = (body: Record<string, string>) =>
      fetch(`${origin}/portal/settings/logo/delete`, { method: 'POST', body: new URLSearchParams(body), headers: { cookie, origin }, redirect: 'manual' })
    const unconfirmed = await post({})
    expect(unconfirmed.status).toBe(303)
    expect(unconfirmed.headers.get('location')).toBe('/portal/settings/logo/delete')
    // mutation: removing without checking confirm=yes fails this
    expect((await logoOf())?.id).toBe(id)

    const removed = await post({ confirm: 'yes' })
    expect(removed.status).toBe(303)
    expect(removed.headers.get('location')).toBe('/portal/settings?flash=logo-removed')
    expect(await logoOf()).toBeNull()
    // mutation: removing only the reference leaves the bytes
    expect(await h.deps.brandAssets.get(tenant.accountId, id)).toBeNull()
    expect((await get(`/portal/assets/logo/${id}`)).status).toBe(404)
    expect(header(await (await get('/portal/')).text())).not.toContain('<img')
    // nothing left to remove: the question sends back to Settings
    expect((await get('/portal/settings/logo/delete')).headers.get('location')).toBe('/portal/settings')

    const { data } = await h.deps.auditLog.list(tenant.accountId, { limit: 100 })
    const actions = data.map((e) => e.action)
    // mutation: the upload or the removal without withAuditedChange leaves its row out
    expect(actions.filter((a) => a === 'branding.logo_set').length).toBeGreaterThanOrEqual(5)
    const removal = data.find((e) => e.action === 'branding.logo_removed')
    expect(removal?.details).toEqual({ id })
    expect(removal?.actor).toMatch(/^portal session [0-9a-f]{12}$/)
    const set = data.find((e) => e.action === 'branding.logo_set')
    expect(set?.details).toMatchObject({ content_type: expect.stringMatching(/^image\//), size: expect.any(Number) })
  })
})

// the deployed shape's store: the same upload and image through the Firestore adapter as the
// composition root builds it (skipped without the emulators, as test/portal/branding.test.ts is)
describe.skipIf(!emulators.firestore)('portal branding: the logo on Firestore', () => {
  let h: Harness
  let tenant: ManagedTenant
  let origin = ''

  beforeAll(async () => {
    const port = await freePort()
    origin = `http://127.0.0.1:${port}`
    h = await createHarness({ backend: 'emulators', config: { portalBaseUrl: origin } })
    tenant = await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY)
    await h.portal.listen({ host: '127.0.0.1', port })
  })
  afterAll(async () => {
    await tenant?.cleanup()
    await h?.close()
  })

  it('uploaded, referenced on the account, served byte for byte, removed', async () => {
    const cookie = await signIn(h.portal, tenant.accountId)
    const form = new FormData()
    form.append('logo', new Blob([WEBP_48x24], { type: 'image/webp' }), 'logo.webp')
    const saved = await fetch(`${origin}/portal/settings/logo`, { method: 'POST', body: form, headers: { cookie, origin }, redirect: 'manual' })
    expect(saved.headers.get('location')).toBe('/portal/settings?flash=logo-saved')
    const id = sha256(WEBP_48x24)
    expect((await h.deps.tenants.getAccount(tenant.accountId))?.portal_logo).toEqual({ id, content_type: 'image/webp', size: WEBP_48x24.length })
    const image = await fetch(`${origin}/portal/assets/logo/${id}`, { headers: { cookie } })
    // mutation: a Firestore adapter that stores the bytes as a string answers other bytes
    expect(Buffer.from(await image.arrayBuffer()).equals(WEBP_48x24)).toBe(true)
    const removed = await fetch(`${origin}/portal/settings/logo/delete`, {
      method: 'POST',
      body: new URLSearchParams({ confirm: 'yes' }),
      headers: { cookie, origin },
      redirect: 'manual',
    })
    expect(removed.headers.get('location')).toBe('/portal/settings?flash=logo-removed')
    expect(await h.deps.brandAssets.get(tenant.accountId, id)).toBeNull()
  })
})
