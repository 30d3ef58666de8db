import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import type { Injectable } from '../ingest/support/harness.ts'
import { page } from './screens-support.ts'

/** A reveal page's path (services/portal-api/src/portal/reveal.ts): a random id, no secret. */
export const REVEAL_LOCATION = /^\/portal\/reveal\/[A-Za-z0-9_-]{22}$/

/**
 * A form that made a secret answered as it must: 303 to a one-time reveal page, which the browser
 * then loads. Returns that page (200, the secret in its `.secret` box) and where it was.
 */
export async function followReveal(app: Injectable, answer: LightMyRequestResponse, cookie: string): Promise<{ location: string; body: string }> {
  expect(answer.statusCode, answer.body).toBe(303)
  const location = String(answer.headers.location)
  expect(location).toMatch(REVEAL_LOCATION)
  const shown = await page(app, location, cookie)
  expect(shown.statusCode, shown.body).toBe(200)
  expect(shown.headers['cache-control']).toContain('no-store')
  return { location, body: shown.body }
}

/** The one secret in a page's `.secret` box (unescaped). */
export function secretIn(html: string): string {
  const m = /<div class="secret"[\s\S]*?<code id="[^"]+">([^<]+)<\/code>/.exec(html)
  expect(m, 'a secret shown once').not.toBeNull()
  return m![1]!.replace(/&amp;/g, '&')
}
