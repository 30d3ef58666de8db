import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { portalApi } from '../../services/portal-api/src/service.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { startReceiver } from '../outbound/harness.ts'
import { join } from 'node:path'
import { copyScreenshotsToDocs } from './docs-screenshots.ts'
import {
  edgePush,
  eventually,
  sharedChromium,
  screenshots,
  sidewaysScroll,
  sharedStack,
  type LocalStack,
  signInPage,
  allViolations,
  takingScreenshots,
} from './support.ts'

/**
 * Issue 22, "Tested as a tenant": EVERY portal screen, as the portal app's own route table lists
 * its GET routes (an onRoute hook, as test/http/anonymous-routes.test.ts walks
 * routes), so a screen added later is walked without anyone adding it here, or the test fails.
 * Against `npm start`'s stack in Debian's Chromium, with an account that has data for each screen
 * (contacts, a connection with pushes, one refused; a webhook whose deliveries succeed and one
 * whose deliveries fail; audit entries; a custom field; a branding accent), each screen:
 * - axe-core: 0 violations of any impact, in light AND dark mode, at 1280 px AND 390 px (issue 29);
 * - 390 px: every table stacks (no table scrolls sideways in its box); help is one line at 1280 px;
 * - keyboard: Tab reaches every visible interactive element, and each shows a focus outline;
 * - 390 px wide: the document does not scroll sideways;
 * - screenshots in .tmp/screenshots/<name>-1280.png and -360.png, when the run takes them
 *   (SCREENSHOTS=1; UPDATE_DOCS_SCREENSHOTS=1, as `npm run screenshots` sets it, also copies them
 *   to docs/portal/).
 *
 * The walk is split in two files, axe-every-screen-first-half.test.ts and -second-half.test.ts,
 * which run on both of the test command's workers: each walks every other screen of the same
 * list (the first from the first, the second from the second), so together they walk every one,
 * with every check above. Each file has its own account and browser context on the suite's shared
 * stack and Chromium (test/setup/browser-hub.ts); the route table's own test runs in the first.
 */

/** GET routes of portal-api that are no screens, by prefix (each has its own tests). */
const NOT_SCREENS: ReadonlyArray<readonly [string, string]> = [
  ['/api/', 'the JSON APIs (management, read contract, schema): test/management, test/http'],
  ['/docs/', 'the API reference page (Scalar)'],
]

/** Pages that are no route (not-found handlers): walked too, with the status they answer. */
const EXTRA_PAGES: Record<string, number> = { '/portal/no-such-screen': 404 }

/** Every other GET route that is not walked, and why. A new route must be walked or listed. */
const NOT_WALKED: Record<string, string> = {
  '/portal/sign-in': 'a single-use sign-in link that answers 303 (no screen); used by beforeAll, walked by test/browser/sign-in-switch.test.ts',
  '/portal/assets/portal.css': 'the stylesheet, not a screen',
  '/portal/assets/portal.js': 'the script, not a screen',
  '/portal/assets/favicon.svg': 'the icon, an image, not a screen',
  '/portal/assets/brand/:file': "an accent's stylesheet, not a screen (test/browser/branding.test.ts)",
  '/portal/assets/logo/:id': "the account's logo, an image, not a screen (test/portal/branding-logo.test.ts)",
  '/portal/settings/logo/delete':
    'the logo removal question: only a page while the account has a logo, so walked (axe in both schemes) by test/browser/branding.test.ts',
}

/** What a walked screen answers when not 200 (a state that is itself the screen). */
const STATUS: Record<string, number> = {
  '/portal/reveal/:revealId': 410, // the one-time view, seen once already when the key was created
}

/** The query a screen needs (its own form's fields), filled at walk time. */
const SHOTS = join(import.meta.dirname, '..', '..', '.tmp', 'screenshots')
const since = () => new Date(Date.now() - 86_400_000).toISOString()
const QUERIES: Record<string, () => string> = {
  '/portal/webhooks/:integrationId/recover': () => `since=${since()}`,
  '/portal/webhooks/:integrationId/recover/result': () => `since=${since()}&found=1&replayed=1`,
}

/** The screenshot (and docs/portal/) name of a route; others take a name made from their path. */
const NAMES: Record<string, string> = {
  '/portal/': 'overview',
  '/portal/connections': 'connections',
  '/portal/connections/:connectionId': 'connection',
  '/portal/webhooks': 'webhooks',
  '/portal/webhooks/:integrationId': 'webhook',
  '/portal/contacts': 'contacts',
  '/contacts/:contactId': 'contact',
  '/portal/settings': 'settings',
  '/portal/activity': 'activity',
  '/portal/audit': 'audit',
  '/portal/reveal/:revealId': 'shown-once',
  '/portal/no-such-screen': 'not-found',
}
const nameOf = (route: string) =>
  NAMES[route] ??
  route
    .replace(/^\/portal\//, '')
    .replace(/[:*]/g, '')
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '')

/**
 * Tabs through the page from the top: which visible interactive elements were never focused, and
 * which were focused without a visible outline (or box-shadow). Elements are named by a short
 * selector for the failure message.
 */
async function keyboardWalk(page: Page): Promise<{ unreached: string[]; noOutline: string[]; count: number }> {
  const label = `[data-kbd]`
  const count = await page.evaluate((attr) => {
    const interactive = [
      ...document.querySelectorAll<HTMLElement>('a[href], button, input:not([type="hidden"]), select, textarea, summary, [tabindex]'),
    ].filter((e) => {
      if ((e as HTMLButtonElement).disabled || e.closest('[hidden], [inert]') || e.tabIndex < 0) return false
      const r = e.getBoundingClientRect()
      // checkVisibility: also false inside a closed <details> (its content is skipped, not focusable)
      return r.width > 0 && r.height > 0 && e.checkVisibility({ visibilityProperty: true })
    })
    // a radio group is one Tab stop (arrow keys move within it): its radios share one mark
    interactive.forEach((e, i) => {
      const radio = e instanceof HTMLInputElement && e.type === 'radio' && e.name
      e.setAttribute(attr, radio ? `radio:${e.form ? [...document.forms].indexOf(e.form) : -1}:${e.name}` : String(i))
    })
    return new Set(interactive.map((e) => e.getAttribute(attr))).size
  }, 'data-kbd')
  // each focus is recorded in the page as it happens (one round trip per Tab, not two); the skip
  // link is off-screen until focused: it counts as reached when the first Tab lands on it
  await page.evaluate(() => {
    const w = window as unknown as { kbdSeen: Array<{ kbd: string | null; outlined: boolean; name: string }> }
    w.kbdSeen = []
    document.addEventListener(
      'focusin',
      () => {
        const e = document.activeElement as HTMLElement | null
        if (!e || e === document.body) return
        const s = getComputedStyle(e)
        // a date or time field's last Tab stop is Chromium's own calendar button inside it: the
        // field is the active element without matching :focus, and the browser draws that button's
        // focus ring itself (page CSS cannot reach it); every part of the field before it is checked
        const pickerButton = e instanceof HTMLInputElement && /^(date|datetime-local|time|month|week)$/.test(e.type) && !e.matches(':focus')
        const outlined = pickerButton || (s.outlineStyle !== 'none' && Number.parseFloat(s.outlineWidth) >= 2) || (s.boxShadow !== 'none' && s.boxShadow !== '')
        const name = `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.getAttribute('name') ? `[name=${e.getAttribute('name')}]` : ''} "${(e.textContent ?? '').trim().slice(0, 30)}" (outline ${s.outlineStyle} ${s.outlineWidth})`
        w.kbdSeen.push({ kbd: e.getAttribute('data-kbd'), outlined, name })
      },
      true,
    )
    ;(document.activeElement as HTMLElement | null)?.blur()
    window.scrollTo(0, 0)
  })
  const reached = new Set<string>()
  const noOutline: string[] = []
  // date and time inputs take a Tab per part (day, month, …): room for those, bounded
  for (let pressed = 0; pressed < count * 4 + 20 && reached.size < count; pressed += 10) {
    for (let i = 0; i < 10; i++) await page.keyboard.press('Tab')
    const seen = await page.evaluate(() => (window as unknown as { kbdSeen: Array<{ kbd: string | null; outlined: boolean; name: string }> }).kbdSeen.splice(0))
    for (const f of seen) {
      if (f.kbd !== null) reached.add(f.kbd)
      if (!f.outlined && !noOutline.includes(f.name)) noOutline.push(f.name)
    }
  }
  const unreached = await page.evaluate(
    ([sel, got]) =>
      [...document.querySelectorAll<HTMLElement>(sel)]
        .filter((e) => !got.includes(e.getAttribute('data-kbd')!))
        .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''} "${(e.textContent ?? e.getAttribute('name') ?? '').trim().slice(0, 30)}"`)
        .slice(0, 10),
    [label, [...reached]] as const,
  )
  return { unreached, noOutline, count }
}

/** The widths every screen state is checked at with axe: a desktop and a phone. */
const WIDTHS = [1280, 390] as const

/** The tables whose box is wider than the screen at `width` px (they should stack instead): named by their label or caption. */
async function tablesScrollingSideways(page: Page, width: number): Promise<string[]> {
  await page.setViewportSize({ width, height: 900 })
  try {
    return await page.evaluate(() =>
      [...document.querySelectorAll('main table')]
        .filter((t) => {
          const box = t.closest('.table-wrap') ?? t
          return t.scrollWidth > box.clientWidth + 1 || box.scrollWidth > box.clientWidth + 1
        })
        .map((t) => t.closest('[aria-label]')?.getAttribute('aria-label') ?? t.querySelector('caption')?.textContent?.trim() ?? t.id ?? 'a table'),
    )
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 })
  }
}

/**
 * Help paragraphs (`p.hint` outside tables, figures, forms' fields and disclosures) that take more
 * than one line at 1280 px: issue 29 keeps help to one line, the rest behind "More".
 */
async function longHelp(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('main p.hint')]
      .filter((p) => !p.closest('details, table, figure, .pager, label') && p.checkVisibility())
      // taller than one and a half lines (an inline code may make a line a little taller)
      .filter((p) => p.getBoundingClientRect().height > 1.5 * Number.parseFloat(getComputedStyle(p).lineHeight))
      .map((p) => (p.textContent ?? '').trim().slice(0, 60)),
  )
}

/** The two halves of the walk: every other screen of the list, from the first or from the second. */
type Half = 'first' | 'second'

/** The screens of `all` that `half` walks: the first, third, … or the second, fourth, … */
const screensOf = (all: readonly string[], half: Half) => all.filter((_, i) => i % 2 === (half === 'first' ? 0 : 1))

// the walk runs axe four times a screen (two schemes, two widths): 20 minutes at most on a loaded machine
export const walkEveryScreen = (half: Half) =>
  describe(`every portal screen in Chromium (the ${half} half): axe in light and dark at 1280 and 390 px, keyboard, 390 px`, { timeout: 1_200_000 }, () => {
    let stack: LocalStack
    let chromium: Awaited<ReturnType<typeof sharedChromium>>
    let page: Page
    let ok: Awaited<ReturnType<typeof startReceiver>>
    let failing: Awaited<ReturnType<typeof startReceiver>>
    const routes: string[] = []
    const params: Record<string, string> = {}
    const operator = () => ({ authorization: `Bearer ${stack.credentials.operator_token}`, 'content-type': 'application/json' })
    const admin = (path: string) => `${stack.portal}/api/v1/admin/accounts/${stack.credentials.account_id}${path}`
    const must = async (res: Promise<Response>, status: number) => {
      const r = await res
      const body = await r.text()
      expect(r.status, body).toBe(status)
      return body ? (JSON.parse(body) as Record<string, unknown>) : {}
    }

    beforeAll(async () => {
      // the route table: the portal app as the composition root builds it, listed by fastify itself
      const deps = await createTestDeps()
      const app = await portalApi.build(deps, {
        beforeRoutes: async (a) => {
          a.addHook('onRoute', (route) => {
            if ([route.method].flat().includes('GET') && !NOT_SCREENS.some(([prefix]) => route.url.startsWith(prefix))) routes.push(route.url)
          })
        },
      } as Parameters<typeof portalApi.build>[1])
      await app.ready()
      await app.close()
      await deps.cleanup()

      chromium = await sharedChromium()
      ;[stack, ok, failing] = await Promise.all([sharedStack(), startReceiver(), startReceiver(() => ({ status: 500, body: 'receiver down' }))])
      page = chromium.context.pages()[0] ?? (await chromium.context.newPage())

      // contacts and pushes on the demo's API connection, one push refused (the inbound debugger)
      const key = { authorization: `Bearer ${stack.credentials.api_key}` }
      const contacts = Array.from({ length: 5 }, (_, i) => ({
        external_id: `axe-${i}`,
        email: `axe.${i}@example.com`,
        first_name: 'Axe',
        last_name: `Walker ${i}`,
      }))
      expect((await edgePush(stack, '/v1/contacts', key, { contacts })).status).toBe(202)
      expect((await edgePush(stack, '/v1/contacts', key, { contacts: 'not a list' })).status).toBe(400)
      await must(
        fetch(admin('/custom-fields'), { method: 'POST', headers: operator(), body: JSON.stringify({ key: 'plan', label: 'Plan', type: 'text' }) }),
        201,
      )
      // a webhook whose deliveries succeed and one whose deliveries fail (its receiver answers 500)
      const hook = async (url: string, name: string) =>
        (await must(
          fetch(admin('/integrations'), {
            method: 'POST',
            headers: operator(),
            body: JSON.stringify({ url, payload_version: 2, name, tiers: { contact_handles: true } }),
          }),
          201,
        )) as { id: string }
      const good = await hook(ok.url, 'CRM sync')
      const bad = await hook(failing.url, 'Old warehouse')
      for (const h of [good, bad]) await must(fetch(admin(`/integrations/${h.id}/test-event`), { method: 'POST', headers: operator() }), 202)
      await eventually('both receivers to be called', async () => (ok.requests.length > 0 && failing.requests.length > 0 ? true : undefined))
      const deliveries = await eventually('a failed attempt in the log', async () => {
        const list = (await must(fetch(admin(`/integrations/${bad.id}/deliveries`), { headers: operator() }), 200)) as {
          data: Array<{ id: string; event_id: string; attempts: unknown[] }>
        }
        return list.data.find((d) => d.attempts.length > 0)
      })
      const connections = (await must(fetch(admin('/connections'), { headers: operator() }), 200)) as { data: Array<{ id: string; type: string }> }

      // signed in, as a tenant: branding and domains saved through the forms (audit entries), a key
      // created (its one-time view is a screen too)
      await signInPage(page, stack)
      await page.goto(`${stack.portal}/portal/settings`)
      await page.getByLabel('Display name').fill('Acme Reach')
      await page.getByLabel('Accent colour').fill('#c2410c')
      await page.getByRole('button', { name: 'Save branding' }).click()
      await page.waitForURL(/flash=branding-saved/)
      await page.getByRole('button', { name: 'Save domains' }).click()
      await page.waitForURL(/flash=domains-saved/)
      const api = connections.data.find((c) => c.type === 'api')!
      await page.goto(`${stack.portal}/portal/connections/${api.id}`)
      await page.getByRole('checkbox', { name: 'contacts:read' }).check()
      await page.getByRole('button', { name: 'Create key' }).click()
      await page.waitForURL(/\/portal\/reveal\//)
      const readKey = (await page.locator('.secret code').first().textContent())!.trim()
      const stored = await eventually('the pushed contacts to be stored', async () => {
        const res = await fetch(`${stack.portal}/api/v1/contacts?limit=10`, { headers: { authorization: `Bearer ${readKey}` } })
        const list = (await res.json()) as { data: Array<{ id: string }> }
        return list.data.length ? list.data : undefined
      })
      Object.assign(params, {
        connectionId: api.id,
        integrationId: bad.id,
        contactId: stored[0]!.id,
        revealId: new URL(page.url()).pathname.split('/').pop()!,
        deliveryId: deliveries.id,
        eventId: deliveries.event_id,
      })
      // a key's revoke question (issue 29, D7) is a screen too: the key's id from its Rotate form
      await page.goto(`${stack.portal}/portal/connections/${api.id}`)
      params.keyId = /\/keys\/([^/]+)\/rotate$/.exec((await page.locator('form[action$="/rotate"]').first().getAttribute('action'))!)![1]!
    }, 300_000)
    afterAll(async () => {
      await chromium?.close()
      await ok?.close()
      await failing?.close()
      await stack?.stop()
    })

    /** the path to visit for a route, or null when a parameter has no value */
    const fill = (route: string): string | null => {
      let missing = false
      const path = route.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
        if (params[name] === undefined) missing = true
        return encodeURIComponent(params[name] ?? '')
      })
      return missing ? null : path
    }

    // once, in the first half's file: the list is the same in both
    if (half === 'first')
      it('the route table lists the screens, and each is walked or listed with a reason', () => {
        // mutation: an empty route table (the onRoute hook installed after the routes) fails here
        expect(routes).toContain('/portal/settings')
        const unknown = [...new Set(routes)].filter((r) => !(r in NOT_WALKED) && fill(r) === null)
        // a new GET route whose parameters this test cannot fill: fill it in beforeAll, or list it in NOT_WALKED
        expect(unknown, 'GET routes neither walked nor listed').toEqual([])
      })

    it(`every screen of the ${half} half: 0 axe violations in light and dark mode, Tab reaches everything with a visible focus, no sideways scroll at 390 px`, async () => {
      // AXE_ROUTES=<regex> walks only the matching routes (to look at one screen); the default is all
      const only = new RegExp(process.env.AXE_ROUTES ?? '')
      const all = [...new Set(routes), ...Object.keys(EXTRA_PAGES)].filter((r) => !(r in NOT_WALKED) && only.test(r))
      const walked = screensOf(all, half)
      const failures: string[] = []
      for (const route of walked) {
        const path = fill(route)
        if (path === null) continue // reported by the route table's test (the first half's file)
        const name = nameOf(route)
        const query = QUERIES[route]?.()
        const res = await page.goto(`${stack.portal}${path}${query ? `?${query}` : ''}`)
        const status = res?.status() ?? 0
        // every walked screen is a page, answered as expected (a form's 400 page is not the screen)
        if (status !== (STATUS[route] ?? EXTRA_PAGES[route] ?? 200)) failures.push(`${route}: ${status}`)
        for (const scheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme: scheme })
          // issue 29: every state at 1280 px and at 390 px (a phone), where tables stack
          // mutation: an input without its label, or --ok green on a dark Canvas, makes axe report it;
          // a table that scrolls sideways at 390 px in a box without tabindex is scrollable-region-focusable (D8)
          for (const width of WIDTHS) {
            await page.setViewportSize({ width, height: 900 })
            const found = await allViolations(page)
            if (found.length) failures.push(`${route} (${scheme}, ${width} px): ${JSON.stringify(found)}`)
          }
          await page.setViewportSize({ width: 1280, height: 900 })
          // dark mode at 1280 px only: the 360 px shot shows the layout, which the scheme does not change
          if (scheme === 'light') await screenshots(page, name)
          else if (takingScreenshots()) await page.screenshot({ path: join(SHOTS, `${name}-dark-1280.png`), fullPage: true })
        }
        await page.emulateMedia({ colorScheme: 'light' })
        // mutation: the stylesheet's narrow-width table block gone → a table scrolls in its box again
        const sideways = await tablesScrollingSideways(page, 390)
        if (sideways.length) failures.push(`${route}: tables that scroll sideways at 390 px instead of stacking: ${sideways.join(', ')}`)
        // mutation: a help paragraph written out in full again (not kit/ui.ts help()) is two lines or more
        const long = await longHelp(page)
        if (long.length) failures.push(`${route}: help longer than one line at 1280 px (use help(short, more)): ${long.join(' | ')}`)
        // mutation: `:focus-visible { outline: none }` in portal.css fails every screen here
        const kbd = await keyboardWalk(page)
        if (kbd.unreached.length) failures.push(`${route}: not reached by Tab: ${kbd.unreached.join(', ')}`)
        if (kbd.noOutline.length) failures.push(`${route}: focused without a visible outline: ${kbd.noOutline.slice(0, 5).join(', ')}`)
        const narrow = await sidewaysScroll(page, 390)
        if (narrow.scrollWidth > narrow.clientWidth) failures.push(`${route}: scrolls sideways at 390 px: ${narrow.sticksOut.join(', ')}`)
      }
      expect(failures).toEqual([])
      // the whole list, of which this file walks its half (the other file the rest)
      if (process.env.AXE_ROUTES === undefined) expect(all.length).toBeGreaterThanOrEqual(10)
      copyScreenshotsToDocs(walked.map(nameOf))
    })
  })
