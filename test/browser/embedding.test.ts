import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Frame, Page } from 'playwright-core'
import { sharedChromium, screenshots, sharedStack, type LocalStack } from './support.ts'

const DASHBOARD = 'https://dashboard.example'
const ELSEWHERE = 'https://elsewhere.example'

/**
 * Issue 22, job 9 in Chromium: a SaaS dashboard embeds the portal in an iframe whose `src` is a
 * sign-in link its backend minted (docs/portal.md, "Embedding"). The dashboard's page is answered
 * by playwright's router inside the browser (no network, no certificate), so it is a real
 * cross-site https top-level document; the portal is `npm start`'s on loopback.
 * test/portal/embedding.test.ts covers the headers and the validation.
 */
describe('the portal embedded in a dashboard, in Chromium', { timeout: 120_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof sharedChromium>>
  let page: Page
  /** Chromium's console reports of frames refused by a policy */
  const refusals: string[] = []
  const admin = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${stack.portal}/api/v1/admin/accounts${path}`, {
      method,
      headers: { authorization: `Bearer ${stack.credentials.operator_token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(res.status, `${method} ${path}`).toBeLessThan(300)
    return (await res.json()) as Record<string, unknown>
  }
  const signInLink = async (accountId: string) => (await admin('POST', `/${accountId}/portal-links`, {})).url as string
  /** the dashboard's page: one iframe of the given sign-in link; the frame once it has loaded */
  const embed = async (site: string, link: string): Promise<Frame> => {
    await page.route(`${site}/`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><title>Dashboard</title><h1>SaaS dashboard</h1><iframe id="portal" src="${link}" width="1000" height="700"></iframe>`,
      }),
    )
    await page.goto(`${site}/`)
    const frame = await (await page.locator('#portal').elementHandle())!.contentFrame()
    await frame!.waitForLoadState()
    return frame!
  }

  beforeAll(async () => {
    ;[chromium, stack] = await Promise.all([sharedChromium(), sharedStack()])
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage())
    // Chromium asks before a public site's page loads a loopback one (Local Network Access); a
    // real dashboard and portal are both public, so the test grants what the tenant would
    await chromium.context.grantPermissions(['local-network-access'], { origin: DASHBOARD })
    await chromium.context.grantPermissions(['local-network-access'], { origin: ELSEWHERE })
    page.on('console', (m) => {
      if (m.text().includes('violates the following Content Security Policy directive')) refusals.push(m.text())
    })
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await stack?.stop()
  })

  // mutation: sendScreen keeps frame-ancestors 'none' -> the allowed account's frame is blocked;
  // mutation: the cookie stays SameSite=Lax -> the framed overview's request carries no cookie and
  // the frame ends on the signed-out page (never framable), not the overview; mutation: any
  // origin allowed (frame-ancestors *) -> the site not on the list shows the overview too
  it("the account's portal renders inside a listed dashboard, signed in; a site not listed, or another account, is refused", async () => {
    const allowed = stack.credentials.account_id
    await admin('PATCH', `/${allowed}`, { portal_frame_ancestors: [DASHBOARD] })
    const framed = await embed(DASHBOARD, await signInLink(allowed))
    await expect.poll(() => framed.locator('h1').textContent()).toBe('Overview')
    expect(new URL(framed.url()).pathname).toBe('/portal/')
    expect(refusals).toEqual([])
    await screenshots(page, 'embedded-in-dashboard')

    // a site not on the list: the sign-in works (its own partitioned cookie), the screen is refused
    const notListed = await embed(ELSEWHERE, await signInLink(allowed))
    await expect.poll(() => refusals.length).toBe(1)
    expect(refusals[0]).toContain("frame-ancestors 'self' https://dashboard.example")
    expect(await notListed.locator('h1', { hasText: 'Overview' }).count()).toBe(0)

    // another account (no list) in the listed dashboard: refused as well
    await chromium.context.clearCookies()
    const other = await admin('POST', '', { public_id: `emb${randomBytes(6).toString('hex')}`, name: 'Not embeddable' })
    const blocked = await embed(DASHBOARD, await signInLink(other.id as string))
    await expect.poll(() => refusals.length).toBe(2)
    expect(refusals[1]).toContain("frame-ancestors 'none'")
    expect(await blocked.locator('h1', { hasText: 'Overview' }).count()).toBe(0)
  })
})
