import type { LightMyRequestResponse } from 'fastify'
import type { Injectable } from '../ingest/support/harness.ts'

export const PORTAL_ORIGIN = 'http://localhost:8081'

/** A browser's form post from the portal's own page: urlencoded, same origin, the session cookie. */
export function formPost(
  app: Injectable,
  url: string,
  cookie: string,
  fields: Record<string, string> = {},
  origin = PORTAL_ORIGIN,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url,
    headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  })
}

export function page(app: Injectable, url: string, cookie: string): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url, headers: { cookie } })
}
