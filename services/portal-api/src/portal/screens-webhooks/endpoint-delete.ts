import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { deleteIntegration, getIntegration } from '@lsv/shared/domain/tenants/integrations.ts'
import { html, redirectTo } from '../kit/page.ts'
import { formOf } from '../kit/forms.ts'
import { sessionOf } from '../session.ts'
import { isConfirmed } from '../kit/confirm.ts'
import { sendConfirmation } from './confirm.ts'
import { WEBHOOKS_PATH, webhookPath } from './paths.ts'
import { IntegrationParams } from './schemas.ts'
import { auditedIntegrationChange, hostOf } from './integration-audit.ts'

/**
 * Deleting a webhook (issue 22 job 5): `GET …/delete` is the confirmation page, its form posts
 * `confirm=yes` to `POST …/delete`, which deletes through the management API's domain function
 * with its audit entry in the same write, then answers 303 to the list. A post without the
 * confirmation is answered 303 to that page. Deliveries still queued end as failed without a
 * request (domain/webhooks/deliver.ts); the delivery log is kept until it ages out.
 */
export function registerEndpointDelete(scope: App, deps: PlatformDeps): void {
  const path = `${WEBHOOKS_PATH}/:integrationId/delete`

  const ask = async (request: Parameters<typeof sessionOf>[0], reply: Parameters<typeof sendConfirmation>[1], integrationId: string) => {
    const { account } = sessionOf(request)
    const i = await getIntegration(deps, account.id, integrationId)
    return sendConfirmation(request, reply, {
      title: 'Delete this webhook?',
      what: html`<p><strong>${i.name ?? i.url}</strong>${i.name ? html` (<code>${i.url}</code>)` : ''} will be deleted.</p>
<p>Nothing more is sent to it: deliveries still waiting for a retry end as failed. Its signing secret stops working, and a webhook you add later gets a new one. The deletion is recorded in the audit log. This cannot be undone.</p>`,
      action: `${webhookPath(i.id)}/delete`,
      button: 'Delete webhook',
      cancel: webhookPath(i.id),
    })
  }

  scope.get(path, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => ask(request, reply, request.params.integrationId))

  scope.post(path, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { integrationId } = request.params
    // a post without the confirmation (crafted, or an old page) is sent to the question: every form answers a redirect
    if (!isConfirmed(formOf(request.body))) return redirectTo(reply, `${webhookPath(integrationId)}/delete`)
    const { account } = sessionOf(request)
    // the host only: a URL's path or query may carry the receiver's own token
    const audited = auditedIntegrationChange(deps, request, 'integration.deleted', (deleted) => ({
      host: hostOf(deleted.url),
      ...(deleted.name ? { name: deleted.name } : {}),
    }))
    await deleteIntegration(audited, account.id, integrationId)
    return redirectTo(reply, WEBHOOKS_PATH, 'integration-deleted')
  })
}
