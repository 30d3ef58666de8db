import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { AppError } from '@lsv/shared/errors/app-error.ts'
import { getIntegration } from '@lsv/shared/domain/tenants/integrations.ts'
import { integrationOf } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import {
  currentSigningSecret,
  DEFAULT_SECRET_GRACE_SECONDS,
  endSecretGrace,
  rotateSigningSecret,
  secretGraceEndOf,
} from '@lsv/shared/domain/webhooks/secret-rotation.ts'
import { html, redirectTo } from '../kit/page.ts'
import { fieldValue, formOf } from '../kit/forms.ts'
import { exactUtc, when } from '../kit/time.ts'
import { redirectToReveal } from '../reveal.ts'
import { sessionOf } from '../session.ts'
import { isConfirmed } from '../kit/confirm.ts'
import { sendConfirmation } from './confirm.ts'
import { endpointTitle } from './endpoint-fields.ts'
import { auditedIntegrationChange, recordIntegrationAction } from './integration-audit.ts'
import { IntegrationParams } from './schemas.ts'
import { SECRET_SECTION_ID } from './secret-views.ts'
import { WEBHOOKS_PATH, webhookPath } from './paths.ts'

const GRACE_CHOICES = new Set([0, 3600, 86_400, 604_800])

/** The grace of the previous signing secret, in words (the reveal page's note). */
const previousNote = (until: string | null): string =>
  until
    ? `The previous secret also signs every delivery until ${exactUtc(until)}: both signatures are in webhook-signature, so your receiver keeps verifying while you change its secret. You can end that sooner on the webhook's page.`
    : 'No previous secret signs deliveries any more.'

/** where the reveal pages lead back to: the webhook's signing secret section */
const secretSectionOf = (integrationId: string) => `${webhookPath(integrationId)}#${SECRET_SECTION_ID}`

/**
 * The signing secret of a webhook: reveal (audited, shown once), rotate with a grace (a
 * confirmation first when the old secret is to stop at once), and end a running grace now (a
 * confirmation first: a receiver still on the old secret then refuses every delivery).
 */
export function registerSigningSecret(scope: App, deps: PlatformDeps): void {
  scope.post(`${WEBHOOKS_PATH}/:integrationId/secret/reveal`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const current = await currentSigningSecret(deps, account.id, integrationId)
    await recordIntegrationAction(deps, request, 'integration.secret_revealed', integrationId)
    return redirectToReveal(deps, request, reply, {
      title: 'Signing secret',
      label: 'The current signing secret',
      secret: current.secret,
      note: previousNote(current.previous_expires_at),
      back: { path: secretSectionOf(integrationId), text: 'Back to the webhook' },
    })
  })

  scope.get(`${WEBHOOKS_PATH}/:integrationId/secret/rotate-now`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const current = await getIntegration(deps, account.id, request.params.integrationId)
    return sendConfirmation(request, reply, {
      title: 'Rotate the secret and stop the old one now?',
      what: html`<p>Deliveries to <strong>${endpointTitle(current)}</strong> are signed with a new secret at once, and the current one stops signing immediately: a receiver still verifying with it refuses every delivery until you give it the new secret. A grace period (24 hours, 1 hour or 7 days) avoids that.</p>`,
      action: `${webhookPath(current.id)}/secret/rotate`,
      fields: { grace_seconds: '0' },
      button: 'Rotate and stop the old secret now',
      cancel: webhookPath(current.id),
    })
  })

  scope.post(`${WEBHOOKS_PATH}/:integrationId/secret/rotate`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const raw = fieldValue(formOf(request.body), 'grace_seconds')
    const grace = raw === '' ? DEFAULT_SECRET_GRACE_SECONDS : Number(raw)
    if (!GRACE_CHOICES.has(grace)) throw new AppError('invalid_payload')
    // "stop it now" ends the secret receivers verify with at once: a 303 to the question first
    if (grace === 0 && !isConfirmed(formOf(request.body))) {
      await getIntegration(deps, account.id, integrationId)
      return redirectTo(reply, `${webhookPath(integrationId)}/secret/rotate-now`)
    }
    const rotated = await rotateSigningSecret(
      auditedIntegrationChange(deps, request, 'integration.secret_rotated', () => ({ grace_seconds: grace })),
      account.id,
      integrationId,
      grace,
    )
    // a redirect: a reload does not rotate again (which would end the secret just copied)
    return redirectToReveal(deps, request, reply, {
      title: 'Signing secret rotated',
      label: 'The new signing secret',
      secret: rotated.signing_secret,
      note: `every delivery is signed with it from now on. ${previousNote(rotated.previous_expires_at)}`,
      back: { path: secretSectionOf(integrationId), text: 'Back to the webhook' },
    })
  })

  registerEndGrace(scope, deps)
}

/**
 * "End it now" (issue 29, D10): while a rotation's grace runs, `GET …/secret/end-grace` asks, and
 * its form's `POST` (with `confirm=yes`) stops the previous secret at once, audited
 * `integration.secret_grace_ended`, then 303 to the secret section with a flash. From then on a
 * delivery carries one signature, the new secret's. With no grace running there is nothing to
 * ask: both answer 303 to the webhook's page.
 */
function registerEndGrace(scope: App, deps: PlatformDeps): void {
  const path = `${WEBHOOKS_PATH}/:integrationId/secret/end-grace`

  scope.get(path, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const current = await integrationOf(deps, account.id, request.params.integrationId)
    const until = secretGraceEndOf(current, deps.clock.now())
    if (until === null) return redirectTo(reply, secretSectionOf(current.id))
    return sendConfirmation(request, reply, {
      title: 'Stop the previous secret now?',
      what: html`<p>The previous signing secret of <strong>${endpointTitle(current)}</strong> signs every delivery beside the new one and stops ${when(until)}. Ended now, deliveries carry the new secret's signature only: a receiver still verifying with the previous secret refuses them until you give it the new one.</p>`,
      action: `${webhookPath(current.id)}/secret/end-grace`,
      button: 'End it now',
      cancel: secretSectionOf(current.id),
    })
  })

  scope.post(path, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    // a post without the confirmation (crafted, or an old page) goes to the question, never acts
    if (!isConfirmed(formOf(request.body))) return redirectTo(reply, `${webhookPath(integrationId)}/secret/end-grace`)
    const { ended } = await endSecretGrace(auditedIntegrationChange(deps, request, 'integration.secret_grace_ended'), account.id, integrationId)
    const query = ended ? `?${new URLSearchParams({ flash: 'secret-grace-ended' })}` : ''
    return redirectTo(reply, `${webhookPath(integrationId)}${query}#${SECRET_SECTION_ID}`)
  })
}
