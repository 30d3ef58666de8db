import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHash } from 'node:crypto'
import { request } from 'node:http'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import type { App } from '@lsv/shared/http/base-app.ts'
import { buildApp } from '../../services/portal-api/src/app.ts'
import { throwingDeps } from './throwing-deps.ts'

/**
 * The API reference page on the portal (`GET /docs`), fetched as a browser would from a
 * listening portal: HTML that loads only same-origin assets (no CDN), each of which answers, under
 * a CSP that allows nothing from elsewhere and no inline script.
 */
let app: App
let origin: string

beforeAll(async () => {
  app = await buildApp(throwingDeps())
  origin = await app.listen({ host: '127.0.0.1', port: 0 })
})
afterAll(async () => {
  await app?.close()
})

/** Every URL the HTML names: src/href attributes, data-url, url(...) in inline styles, bare http(s) URLs. */
function referencedUrls(html: string): string[] {
  const urls = new Set<string>()
  for (const m of html.matchAll(/\s(?:src|href|data-url|action|poster)\s*=\s*["']([^"']+)["']/gi)) urls.add(m[1]!)
  for (const m of html.matchAll(/url\(\s*["']?([^"')]+)["']?\s*\)/gi)) urls.add(m[1]!)
  for (const m of html.matchAll(/(?:https?:)?\/\/[a-z0-9.-]+(?::\d+)?[^\s"'<>]*/gi)) urls.add(m[0])
  return [...urls]
}

describe('GET /docs: the API reference page', () => {
  let res: Response
  let html: string

  beforeAll(async () => {
    res = await fetch(`${origin}/docs`, { redirect: 'manual' })
    html = await res.text()
  })

  it('answers 200 HTML directly (no redirect)', () => {
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    expect(html).toMatch(/<!doctype html>/i)
    expect(html).toContain('id="api-reference"')
  })

  it('references only same-origin assets, and each answers 200', async () => {
    const urls = referencedUrls(html)
    expect(urls.length).toBeGreaterThanOrEqual(2)
    const foreign = urls.filter((u) => new URL(u, `${origin}/docs`).origin !== origin)
    expect(foreign).toEqual([])
    for (const u of urls) {
      const asset = await fetch(new URL(u, `${origin}/docs`))
      expect(asset.status, u).toBe(200)
      await asset.arrayBuffer()
    }
  })

  it('loads Scalar from the installed package and points it at the committed OpenAPI document', async () => {
    const script = await fetch(`${origin}/docs/js/scalar.js`)
    expect(script.headers.get('content-type')).toMatch(/^application\/javascript/)
    expect(await script.text()).toContain('createApiReference')
    const doc = (await (await fetch(`${origin}/api/v1/openapi.json`)).json()) as { openapi: string }
    expect(doc.openapi).toBe('3.1.0')
    const configuration = JSON.parse(
      html
        .match(/data-configuration="([^"]*)"/)![1]!
        .replaceAll('&quot;', '"')
        .replaceAll('&lt;', '<')
        .replaceAll('&gt;', '>')
        .replaceAll('&amp;', '&'),
    )
    expect(configuration).toMatchObject({ url: '/api/v1/openapi.json', withDefaultFonts: false, telemetry: false })
  })

  it('carries no inline script and a CSP that allows nothing from another origin', () => {
    for (const tag of html.match(/<script\b[^>]*>[\s\S]*?<\/script>/gi) ?? []) {
      const executable = !/type="application\/json"/.test(tag)
      if (executable) expect(tag, 'an executable script loads a file').toMatch(/^<script\b[^>]*\ssrc="[^"]+"[^>]*>\s*<\/script>$/)
    }
    const csp = res.headers.get('content-security-policy')!
    const directives = new Map(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...sources]) => [name!, sources]),
    )
    expect(directives.get('default-src')).toEqual(["'none'"])
    expect(directives.get('script-src')).toEqual(["'self'"])
    expect(directives.get('connect-src')).toEqual(["'self'"])
    expect(directives.get('frame-ancestors')).toEqual(["'none'"])
    const allowed = new Set(["'self'", "'none'", "'unsafe-inline'", 'data:', 'blob:'])
    for (const [name, sources] of directives) {
      for (const s of sources) expect(allowed.has(s), `${name} ${s}`).toBe(true)
      if (name !== 'style-src') expect(sources, name).not.toContain("'unsafe-inline'")
    }
  })
})

/** a GET with exactly these headers (fetch adds its own Accept-Encoding and decodes): status, headers, raw bytes */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }))
    })
      .on('error', reject)
      .end()
  })
}

// Issue 31 (attack, low): the 4.35 MB script went out uncompressed and uncached to anyone.
describe("the API reference's script: compressed, and immutable under a URL named by its content", () => {
  let scriptUrl: string
  let plain: Buffer

  beforeAll(async () => {
    const html = await (await fetch(`${origin}/docs`)).text()
    scriptUrl = /<script src="([^"]+)"><\/script>/.exec(html)![1]!
    plain = (await rawGet(`${origin}${scriptUrl}`, {})).bytes
  })

  it('the page names the script by a hash of its bytes, and that URL is cached for a year, immutable', async () => {
    expect(scriptUrl).toMatch(/^\/docs\/js\/scalar\.js\?v=[A-Za-z0-9_-]{16}$/)
    expect(plain.toString('utf8')).toContain('createApiReference')
    // the version is the content's: a new script is a new URL
    expect(scriptUrl.split('v=')[1]).toBe(createHash('sha256').update(plain).digest('base64url').slice(0, 16))
    const res = await rawGet(`${origin}${scriptUrl}`, { 'accept-encoding': 'br' })
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(res.headers.vary).toContain('accept-encoding')
    // the unversioned URL is never cached as immutable
    expect((await rawGet(`${origin}/docs/js/scalar.js`, {})).headers['cache-control']).toBe('no-cache')
    expect((await rawGet(`${origin}/docs/js/scalar.js?v=old`, {})).headers['cache-control']).toBe('no-cache')
  })

  it('is sent as brotli or gzip as the client accepts, at under a third of its size, the same bytes once decoded', async () => {
    const br = await rawGet(`${origin}${scriptUrl}`, { 'accept-encoding': 'gzip, deflate, br' })
    expect(br.status).toBe(200)
    expect(br.headers['content-encoding']).toBe('br')
    expect(br.bytes.length).toBeLessThan(plain.length / 3)
    expect(brotliDecompressSync(br.bytes).equals(plain)).toBe(true)
    const gz = await rawGet(`${origin}${scriptUrl}`, { 'accept-encoding': 'gzip, br;q=0' })
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(gz.bytes.length).toBeLessThan(plain.length / 3)
    expect(gunzipSync(gz.bytes).equals(plain)).toBe(true)
    const none = await rawGet(`${origin}${scriptUrl}`, {})
    expect(none.headers['content-encoding']).toBeUndefined()
    expect(none.bytes.equals(plain)).toBe(true)
  })

  it('answers a revalidation by its ETag with 304', async () => {
    const first = await rawGet(`${origin}/docs/js/scalar.js`, {})
    const again = await rawGet(`${origin}/docs/js/scalar.js`, { 'if-none-match': String(first.headers.etag) })
    expect(again.status).toBe(304)
    expect(again.bytes.length).toBe(0)
  })
})
