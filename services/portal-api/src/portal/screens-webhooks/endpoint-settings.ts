import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import type { UpdateIntegrationBody } from '@lsv/shared/contract/admin.ts'
import { getIntegration, updateIntegration } from '@lsv/shared/domain/tenants/integrations.ts'
import { flashOf, html, redirectTo } from '../kit/page.ts'
import { fieldValue, formOf } from '../kit/forms.ts'
import { sessionOf } from '../session.ts'
import { isConfirmed } from '../kit/confirm.ts'
import { sendConfirmation } from './confirm.ts'
import { endpointTitle } from './endpoint-fields.ts'
import { integrationForm, requireUrlLength } from './endpoint-form.ts'
import { sendDetail } from './endpoint-page.ts'
import { auditedIntegrationChange, hostOf } from './integration-audit.ts'
import { refusal } from './refusals.ts'
import { FlashQuery, IntegrationParams } from './schemas.ts'
import { WEBHOOKS_PATH, webhookPath } from './paths.ts'

/**
 * A webhook's settings: the edit form's `POST`, switching it off (a confirmation first: nothing
 * is delivered meanwhile) and on again (after a 410 or the tenant's own switch).
 */
export function registerEndpointSettings(scope: App, deps: PlatformDeps): void {
  scope.post(`${WEBHOOKS_PATH}/:integrationId`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const fields = formOf(request.body)
    const { state, body, described } = integrationForm(fields)
    const update: UpdateIntegrationBody = { ...body, ...described, active: fieldValue(fields, 'active') === 'on' }
    // switching an active webhook off is destructive (nothing is delivered meanwhile): the other
    // fields are saved with the webhook still on, then a 303 leads to the confirmation page, whose
    // form alone switches it off (every form answers a redirect; nothing typed is lost)
    let askToDisable = false
    if (!update.active && !isConfirmed(fields)) {
      const current = await getIntegration(deps, account.id, integrationId)
      if (current.active) {
        update.active = true
        askToDisable = true
      }
    }
    try {
      requireUrlLength(state.url)
      const withEntry = auditedIntegrationChange(deps, request, 'integration.updated', (i) => ({
        host: hostOf(i.url),
        payload_version: i.payload_version,
        contact_handles: i.tiers.contact_handles,
        sensitive_traits: i.tiers.sensitive_traits,
        active: i.active,
      }))
      await updateIntegration(withEntry, account.id, integrationId, update)
    } catch (err) {
      if (isAppError(err) && err.status === 404) throw err
      return sendDetail(deps, request, reply, integrationId, 400, { form: { ...state, error: refusal(err) } })
    }
    if (askToDisable) return redirectTo(reply, `${webhookPath(integrationId)}/disable`, 'integration-updated')
    return redirectTo(reply, webhookPath(integrationId), 'integration-updated')
  })

  const disablePath = `${WEBHOOKS_PATH}/:integrationId/disable`
  scope.get(disablePath, { schema: { hide: true, params: IntegrationParams, querystring: FlashQuery } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const current = await getIntegration(deps, account.id, request.params.integrationId)
    if (!current.active) return redirectTo(reply, webhookPath(current.id))
    const saved = flashOf(request)
    return sendConfirmation(request, reply, {
      title: 'Disable this webhook?',
      what: html`${saved ? html`<p class="flash" role="status">${saved} It is still on.</p>` : ''}<p><strong>${endpointTitle(current)}</strong> will stop receiving events: nothing is delivered to it while it is disabled, and deliveries waiting for a retry end as failed. You can re-enable it on its page.</p>`,
      action: `${webhookPath(current.id)}/disable`,
      button: 'Disable webhook',
      cancel: webhookPath(current.id),
    })
  })
  scope.post(disablePath, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    // a post without the confirmation (crafted, or an old page) goes to the question, never acts
    if (!isConfirmed(formOf(request.body))) return redirectTo(reply, `${webhookPath(integrationId)}/disable`)
    await updateIntegration(
      auditedIntegrationChange(deps, request, 'integration.updated', (i) => ({ host: hostOf(i.url), active: i.active })),
      account.id,
      integrationId,
      { active: false },
    )
    return redirectTo(reply, webhookPath(integrationId), 'integration-updated')
  })

  // an integration the platform disabled (410) or the tenant switched off, on again
  scope.post(`${WEBHOOKS_PATH}/:integrationId/enable`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    await updateIntegration(auditedIntegrationChange(deps, request, 'integration.enabled'), account.id, integrationId, { active: true })
    return redirectTo(reply, webhookPath(integrationId), 'integration-updated')
  })
}
