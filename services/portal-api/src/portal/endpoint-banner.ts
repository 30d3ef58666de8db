import type { preHandlerAsyncHookHandler } from 'fastify'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { IntegrationRecord } from '@lsv/shared/model/records.ts'
import { html, type SafeHtml } from './kit/html.ts'
import { sessionOf } from './session.ts'
import { setBanner } from './kit/banner-slot.ts'
import { webhookPath } from './screens-webhooks/paths.ts'

/**
 * The account-wide banner (issue 22 job 5): on every screen, a line when a webhook endpoint is
 * disabled or keeps failing, with a link to it. Read from the account's integrations through the
 * cached tenant lookups (one list, no delivery-log read): the dispatcher marks an integration
 * `failing` when its failure streak crosses a step of the threshold and clears it on the next
 * success (domain/operations/endpoint-failing.ts), and `active: false` is the disabled state.
 */
const link = (i: IntegrationRecord) => html`<a href="${webhookPath(i.id)}">${i.name ?? new URL(i.url).host}</a>`

export function bannerFor(integrations: readonly IntegrationRecord[]): SafeHtml | null {
  const disabled = integrations.filter((i) => !i.active)
  const failing = integrations.filter((i) => i.active && i.failing)
  if (disabled.length === 0 && failing.length === 0) return null
  const parts: SafeHtml[] = []
  if (disabled.length > 0)
    parts.push(
      html`<p><strong>${disabled.length === 1 ? 'A webhook is disabled' : `${disabled.length} webhooks are disabled`}</strong>: nothing is delivered to ${disabled.map((i, n) => html`${n > 0 ? ', ' : ''}${link(i)}`)}.</p>`,
    )
  if (failing.length > 0)
    parts.push(
      html`<p><strong>${failing.length === 1 ? 'A webhook keeps failing' : `${failing.length} webhooks keep failing`}</strong>: ${failing.map((i, n) => html`${n > 0 ? ', ' : ''}${link(i)} (${i.failing?.percent ?? 0} % of the failure threshold)`)}. Deliveries are retried; check the endpoint.</p>`,
    )
  return html`<div class="banner" role="status" id="endpoint-banner">${parts}</div>`
}

/** A preHandler of the screens' scope (after the session check): computes the request's banner. */
export function loadEndpointBanner(deps: Pick<PlatformDeps, 'tenantLookups'>): preHandlerAsyncHookHandler {
  return async (request) => {
    if (request.method !== 'GET') return
    const { account } = sessionOf(request)
    const banner = bannerFor(await deps.tenantLookups.listIntegrations(account.id))
    if (banner) setBanner(request, banner)
  }
}
