import type { LightMyRequestResponse } from 'fastify'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type StoredTenant, type TenantSpec } from '../helpers/tenant.ts'
import { recordingQueue, type Injectable } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'

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

/** What a screen test starts from: a portal app on its own deps, a test tenant, its signed-in session. */
export interface SignedInPortal {
  deps: Awaited<ReturnType<typeof createTestDeps>>
  portal: Injectable
  t: StoredTenant
  cookie: string
}

/**
 * The screen tests' set-up, written once: deps whose queue records instead of delivering, the
 * portal app, a tenant (`spec`) and a session cookie; `closeSignedInPortal` undoes it.
 */
export async function openSignedInPortal(spec?: TenantSpec): Promise<SignedInPortal> {
  const deps = await createTestDeps({ queue: recordingQueue().queue })
  const portal = await buildPortal(deps)
  const t = await createTestTenant(deps, spec)
  return { deps, portal, t, cookie: await signIn(portal, t.account.id) }
}

export async function closeSignedInPortal(s: Partial<SignedInPortal>): Promise<void> {
  await s.t?.cleanup()
  await s.portal?.close()
  await s.deps?.cleanup()
}
