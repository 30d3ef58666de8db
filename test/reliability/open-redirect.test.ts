import { describe, expect, it } from 'vitest'
import { parse as legacyParse } from 'node:url'
import fc from 'fast-check'
import { mintContactLink } from '@lsv/shared/domain/links/mint.ts'
import { isAuthorizedHost } from '@lsv/shared/domain/links/destination.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { ContactStore } from '@lsv/shared/ports/contact-store.ts'
import type { LinkTokenStore } from '@lsv/shared/ports/link-tokens.ts'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 8: open redirect. Hostile and valid destination corpora go through link minting
 * (mintContactLink: the destination check, the token write and the tagged link the customer
 * receives) for an account whose authorized domains are `example.com` and `shop.acme.io`.
 * A hostile URL is accepted when a link comes back; for every link that does come back, the
 * host must be authorized as read by WHATWG AND by Node's legacy parser (parser differentials
 * are how open redirects slip through allow-lists).
 */

const AUTHORIZED = ['example.com', 'shop.acme.io']
const account: AccountRecord = {
  id: 'acc-rel-open-redirect',
  public_id: 'rel',
  name: 'rel',
  active: true,
  api_access: true,
  permitted_tiers: [1, 2, 3],
  authorized_domains: AUTHORIZED,
  created_at: '2026-09-04T00:00:00.000Z',
  updated_at: '2026-09-04T00:00:00.000Z',
}
/**
 * Port stubs: the contact exists, token writes succeed (the destination check is under test).
 * `satisfies` keeps each stub's method names checked against its port, so a renamed port
 * method fails the type-check instead of every mint.
 */
const contacts = {
  async get(accountId: string, id: string) {
    return { id, account_id: accountId }
  },
  async getByAnchor(accountId: string) {
    return { id: 'c1', account_id: accountId }
  },
} satisfies Partial<Record<keyof ContactStore, unknown>>
const linkTokens = { async put() {} } satisfies Partial<LinkTokenStore>
const deps = { clock: new ManualClock(), contacts, linkTokens } as unknown as PlatformDeps

type Outcome = { ok: true; link: string } | { ok: false; error: string }
async function mint(destinationUrl: string): Promise<Outcome> {
  try {
    const r = await mintContactLink(deps, account, { destinationUrl, contactId: 'c1' })
    return { ok: true, link: r.link }
  } catch (err) {
    if (isAppError(err)) return { ok: false, error: err.message }
    throw err
  }
}

const EVIL = ['evil.com', 'attacker.net', 'example.com.evil.com', 'evilexample.com', 'example.co', 'acme.io', 'shop.acme.io.evil.com', 'xn--exmple-cua.com']
const HOST_TRICKS: string[] = [
  // userinfo, backslash and delimiter confusion around an authorized name
  'https://example.com@evil.com/',
  'https://example.com:443@evil.com/',
  'https://example.com%40evil.com/',
  'https://@evil.com/',
  'https://user@example.com/',
  'https://:@example.com/',
  'https://example.com\\@evil.com/',
  'https://evil.com\\@example.com/',
  'https://evil.com\\.example.com/',
  'https:\\\\evil.com/',
  'https:/\\evil.com/',
  'https:\\/evil.com/',
  '/\\evil.com',
  '\\\\evil.com',
  'https://evil.com#@example.com',
  'https://evil.com?@example.com',
  'https://evil.com/.example.com',
  'https://evil.com;example.com',
  'https://evil.com&.example.com/',
  'https://evil.com!.example.com/',
  'https://evil.com,example.com/',
  'https://evil.com$.example.com/',
  'https://evil.com*.example.com/',
  'https://evil.com(.example.com/',
  'https://evil.com=.example.com/',
  'https://evil.com+.example.com/',
  // encodings
  'https://evil%2ecom/',
  'https://example.com%2f@evil.com/',
  'https://%65vil.com/',
  'https://evil.com%23.example.com/',
  'https://evil.com%3f.example.com/',
  'https://evil.com%5c.example.com/',
  'https://evil.com%00.example.com/',
  'https://ex%61mple.com/',
  'https://evil.com%E3%80%82example.com/',
  'https://evil。com/',
  'https://evil．com/',
  'https://example。com.evil.com/',
  // whitespace / control
  'https://evil.com\t.example.com/',
  'https://evil.com\n.example.com/',
  'https://evil.com\r.example.com/',
  ' https://evil.com/',
  'https://evil.com /',
  '\thttps://evil.com/',
  'https://evil.com\u0000.example.com/',
  'https://example.com\u200b.evil.com/',
  'https://example.com\u00ad.evil.com/',
  'https://evil.com\u2028.example.com/',
  'https://evil.com\u00a0.example.com/',
  'https://evil.com\ufeff.example.com/',
  // schemes and relative forms
  '//evil.com/',
  '///evil.com/',
  '////evil.com',
  'evil.com',
  '/evil.com',
  'javascript:alert(document.domain)//example.com',
  'JaVaScRiPt:alert(1)',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'vbscript:msgbox(1)',
  'ftp://example.com/',
  'file:///etc/passwd',
  'ws://example.com/',
  'https:evil.com',
  'https:/evil.com',
  'http:\\\\example.com',
  'blob:https://example.com/x',
  'intent://example.com#Intent;scheme=https;end',
  'chrome://settings',
  'about:blank',
  'x-https://example.com/',
  // IP literals in every spelling
  'http://127.0.0.1/',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://0177.0.0.1/',
  'http://[::1]/',
  'http://[::ffff:7f00:1]/',
  'http://169.254.169.254/',
  'http://93.184.216.34/',
  'http://1.1.1.1/',
  'http://[2606:4700::1111]/',
  'http://0/',
  'http://1/',
  // look-alikes
  'https://exаmple.com/',
  'https://ехample.com/',
  'https://examp1e.com/',
  'https://example.cоm/',
  'https://shop.acme.іo/',
  'https://еxample.com.evil.com/',
  'https://example.com./',
  'https://shop.acme.io./',
  'https://example.com../',
  'https://.example.com/',
  'https://example..com/',
  // ports and odd authorities
  'https://example.com:evil.com/',
  'https://example.com:99999/',
  'https://example.com:-1/',
  'https://example.com::443/',
  'https://[example.com]/',
  'https://',
  'https:///',
  'http://:443/',
  'https://?example.com',
  'https://#example.com',
]
const TEMPLATES = [
  (h: string) => `https://${h}/`,
  (h: string) => `http://${h}`,
  (h: string) => `https://${h}:8443/a?b=c`,
  (h: string) => `HTTPS://${h.toUpperCase()}/`,
  (h: string) => `https://${h}/?next=https://example.com/`,
  (h: string) => `https://${h}#https://example.com`,
  (h: string) => `https://${h}./`,
  (h: string) => `https://example.com@${h}/`,
  (h: string) => `https://${h}\\@example.com`,
]
const HOSTILE = [...HOST_TRICKS, ...EVIL.flatMap((h) => TEMPLATES.map((t) => t(h)))]

const VALID = [
  'https://example.com',
  'https://example.com/',
  'http://example.com/',
  'https://www.example.com/',
  'https://a.b.c.example.com/deep/path',
  'HTTPS://EXAMPLE.COM/',
  'https://Example.Com/Path?Q=1',
  'https://example.com:443/',
  'http://example.com:80/',
  'https://example.com:8443/x',
  'https://example.com/?lsv=stale',
  'https://example.com/?a=1&lsv=stale&b=2',
  'https://example.com/path#frag',
  'https://example.com/#/spa?x=1',
  'https://example.com/?redirect=https://evil.com',
  'https://example.com/path@evil.com',
  'https://example.com/?q=%20%2F',
  'https://example.com/%7Euser',
  'https://example.com/ä?ö=ü',
  'https://example.com/a b'.replace(' ', '%20'),
  'https://shop.acme.io/',
  'https://shop.acme.io/cart?id=1',
  'https://eu.shop.acme.io/',
  'https://SHOP.ACME.IO/',
  'https://x-1.example.com/',
  'https://123.example.com/',
  'https://s_1.example.com/',
  'https://example.com/?utm_source=a&utm_medium=b&utm_campaign=c',
  'https://example.com/.well-known/x',
  'https://example.com/?#',
]

describe('reliability 8: open redirect through link minting', () => {
  it('accepts 0 of the hostile corpus (at least 100 URLs), rejecting each with one of the two contract texts', async () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(100)
    const accepted: string[] = []
    const badTexts: string[] = []
    for (const raw of HOSTILE) {
      const r = await mint(raw)
      if (r.ok) accepted.push(`${JSON.stringify(raw)} -> ${r.link}`)
      else if (r.error !== 'invalid destination URL' && r.error !== 'destination host is not authorized') badTexts.push(`${JSON.stringify(raw)}: ${r.error}`)
    }
    printFigure('open-redirect-hostile', `${accepted.length}/${HOSTILE.length} hostile destination URLs accepted`)
    expect(accepted).toEqual([])
    expect(badTexts).toEqual([])
  })

  it('rejects 0 of the valid corpus, and every minted link points at an authorized host for both URL parsers', async () => {
    const rejected: string[] = []
    const unsafe: string[] = []
    for (const raw of VALID) {
      const r = await mint(raw)
      if (!r.ok) {
        rejected.push(`${raw}: ${r.error}`)
        continue
      }
      if (!linkIsSafe(r.link)) unsafe.push(`${raw} -> ${r.link}`)
    }
    printFigure('open-redirect-valid', `${rejected.length}/${VALID.length} valid destination URLs rejected`)
    expect(rejected).toEqual([])
    expect(unsafe).toEqual([])
  })

  it('characters IDNA deletes silently (zero-width space, soft hyphen) can only yield a link on an authorized host', async () => {
    // `evil.com<U+200B>.example.com` is read as `evil.com.example.com`: a subdomain of an
    // authorized domain, so minting it is not an open redirect; what matters is where the link goes
    const unsafe: string[] = []
    for (const raw of [
      'https://evil.com\u200b.example.com/',
      'https://evil.com\u00ad.example.com/',
      'https://ex\u200bample.com/',
      'https://example\u00ad.com/',
    ]) {
      const r = await mint(raw)
      if (r.ok && !linkIsSafe(r.link)) unsafe.push(`${JSON.stringify(raw)} -> ${r.link}`)
    }
    expect(unsafe).toEqual([])
  })

  it('fast-check: generated URLs are accepted exactly when their host is authorized, and accepted links stay on it', async () => {
    let accepted = 0
    let rejected = 0
    const unauthorizedAccepted: string[] = []
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), authorizedUrl(), mutatedUrl()), async (raw) => {
        const r = await mint(raw)
        if (r.ok) {
          accepted++
          if (!linkIsSafe(r.link)) unauthorizedAccepted.push(`${JSON.stringify(raw)} -> ${r.link}`)
        } else {
          rejected++
          expect(['invalid destination URL', 'destination host is not authorized']).toContain(r.error)
        }
      }),
      { numRuns: 3000, seed: 20260904 },
    )
    printFigure(
      'open-redirect-generated',
      `${unauthorizedAccepted.length} unauthorized links minted over 3000 generated URLs (${accepted} accepted, ${rejected} rejected)`,
    )
    expect(unauthorizedAccepted).toEqual([])
    expect(accepted).toBeGreaterThan(0)
  })
})

/** The link's host is authorized for WHATWG and for the legacy parser, and they agree. */
function linkIsSafe(link: string): boolean {
  let whatwg: string
  try {
    whatwg = new URL(link).hostname
  } catch {
    return false
  }
  const legacy = legacyParse(link).hostname ?? ''
  return whatwg === legacy && isAuthorizedHost(whatwg, AUTHORIZED) && /^https?:\/\//.test(link)
}

function authorizedUrl(): fc.Arbitrary<string> {
  const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/)
  return fc
    .tuple(
      fc.constantFrom('http', 'https'),
      fc.array(label, { maxLength: 3 }),
      fc.constantFrom(...AUTHORIZED),
      fc.webPath(),
      fc.webQueryParameters(),
      fc.webFragments(),
    )
    .map(([scheme, subs, domain, path, query, frag]) => `${scheme}://${[...subs, domain].join('.')}${path}${query ? `?${query}` : ''}${frag ? `#${frag}` : ''}`)
}

/** An authorized URL with hostile characters spliced into it at random. */
function mutatedUrl(): fc.Arbitrary<string> {
  const noise = fc.constantFrom(
    '@',
    '\\',
    '%40',
    '%2e',
    '#',
    '?',
    '/',
    '.',
    ':',
    ' ',
    '\t',
    '\u0000',
    'evil.com',
    '@evil.com',
    '.evil.com',
    '%00',
    '//',
    '\u3002',
    '[',
    ']',
  )
  return fc.tuple(authorizedUrl(), fc.array(fc.tuple(fc.nat(), noise), { minLength: 1, maxLength: 3 })).map(([url, edits]) => {
    let s = url
    for (const [at, piece] of edits) {
      const i = at % (s.length + 1)
      s = s.slice(0, i) + piece + s.slice(i)
    }
    return s
  })
}
