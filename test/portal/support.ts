import { expect } from 'vitest'
import { parseSetCookie, type SetCookie } from 'cookie'
import type { App } from '@lsv/shared/http/base-app.ts'
import { ADMIN, OPERATOR } from '../management/harness.ts'

/** What a portal test needs of an app: fastify's inject. */
type Injectable = Pick<App, 'inject'>

/** `POST …/portal-links` with the operator token; returns the 201 body. */
export async function mintLink(app: Injectable, accountId: string, body: object = {}): Promise<{ url: string; expires_at: string }> {
  const res = await app.inject({ method: 'POST', url: `${ADMIN}/${accountId}/portal-links`, headers: OPERATOR, payload: body })
  if (res.statusCode !== 201) throw new Error(`portal-links -> ${res.statusCode} ${res.body}`)
  return res.json()
}

/** The request target of a sign-in URL (what a browser requests on the portal host). */
export function pathOf(url: string): string {
  const u = new URL(url)
  return `${u.pathname}${u.search}`
}

/** The token of a sign-in URL. */
export function tokenOf(url: string): string {
  return new URL(url).searchParams.get('token')!
}

/** The one Set-Cookie of a response, parsed (attributes included). */
export function setCookieOf(res: { headers: Record<string, unknown> }): SetCookie | null {
  const raw = res.headers['set-cookie']
  if (raw === undefined) return null
  const list = Array.isArray(raw) ? raw : [raw as string]
  expect(list).toHaveLength(1)
  return parseSetCookie(list[0]!)
}

/** Follows a fresh sign-in link of the account; returns the `Cookie` header a browser would send. */
export async function signIn(app: Injectable, accountId: string): Promise<string> {
  const { url } = await mintLink(app, accountId)
  const res = await app.inject({ method: 'GET', url: pathOf(url) })
  expect(res.statusCode).toBe(303)
  const cookie = setCookieOf(res)!
  return `${cookie.name}=${cookie.value}`
}

/** Headers of a same-origin browser request carrying only the session cookie. */
export function sameOrigin(cookie: string, origin = 'http://localhost:8081'): Record<string, string> {
  return { cookie, origin, 'content-type': 'application/json' }
}
