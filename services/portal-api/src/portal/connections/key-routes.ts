import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { CreateKeyBody } from '@lsv/shared/contract/admin.ts'
import { getConnection } from '@lsv/shared/domain/tenants/connections.ts'
import { getApiKey, issueApiKey, revokeApiKey, rotateApiKey } from '@lsv/shared/domain/tenants/manage-api-keys.ts'
import type { ApiKeyRecord } from '@lsv/shared/model/records.ts'
import { checkForm, fieldErrorsOf, fieldValue, listOf, type FieldErrors } from '../kit/forms.ts'
import { redirectTo, sendPage } from '../kit/page.ts'
import { FormBody } from '../kit/ui.ts'
import { auditOf } from '../kit/audited.ts'
import { isConfirmed } from '../kit/confirm.ts'
import { exactUtc } from '../kit/time.ts'
import { sessionOf } from '../session.ts'
import { redirectToReveal } from '../reveal.ts'
import { ConnectionParams, GraceQuery, graceOf, KeyParams } from './form-values.ts'
import { revokePath, revokeQuestionView, rotateNowPath, rotateNowQuestionView } from './credential-views.ts'
import type { ConnectionPages } from './pages.ts'
import { CONNECTIONS_PATH, connectionPath } from './paths.ts'

/**
 * An api connection's keys: create (shown once), rotate with a grace (the new one shown once; with
 * no grace a question first), revoke after a question (a key revoked already is not revoked again).
 */
export function registerKeyRoutes(scope: App, deps: PlatformDeps, pages: ConnectionPages): void {
  scope.post(`${CONNECTIONS_PATH}/:connectionId/keys`, { schema: { hide: true, params: ConnectionParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId } = request.params
    const typed = { name: fieldValue(request.body, 'name'), scopes: listOf(request.body, 'scopes') }
    const name = typed.name.trim()
    const checked = checkForm(CreateKeyBody, { scopes: typed.scopes, ...(name ? { name } : {}) })
    // a refused form comes back as it was sent: the name typed, the scopes ticked
    const refused = (errors: FieldErrors) => pages.detail(request, reply, { connectionId, state: { errors: { keys: errors }, keyValues: typed }, status: 400 })
    if (!checked.ok) return refused(checked.errors)
    let created
    try {
      const withEntry = auditOf(deps, request).change((k: ApiKeyRecord) => ({
        action: 'api_key.create',
        target: { connection_id: connectionId, key_id: k.id },
        details: { scopes: k.scopes, prefix: k.prefix },
      }))
      created = await issueApiKey(withEntry, account.id, connectionId, checked.value)
    } catch (err) {
      return refused(fieldErrorsOf(err))
    }
    return redirectToReveal(deps, request, reply, {
      title: 'API key created',
      label: 'New API key',
      secret: created.key,
      note: 'copy it now: it is not shown again.',
      back: { path: connectionPath(connectionId), text: 'Back to the connection' },
    })
  })

  scope.post(`${CONNECTIONS_PATH}/:connectionId/keys/:keyId/rotate`, { schema: { hide: true, params: KeyParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId, keyId } = request.params
    const grace = graceOf(request.body)
    if (!grace.ok) return pages.detail(request, reply, { connectionId, state: { errors: { keys: grace.errors } }, status: 400 })
    // no grace stops the old key at once: a 303 to the question first (as the webhook secret's
    // "stop it now" does); another account's key is 404 first, as the question would answer
    if (grace.seconds === 0 && !isConfirmed(request.body)) {
      await getApiKey(deps, account.id, connectionId, keyId)
      return redirectTo(reply, rotateNowPath(connectionId, keyId))
    }
    let rotated
    try {
      rotated = await rotateApiKey(deps, account.id, connectionId, keyId, grace.seconds)
    } catch (err) {
      return pages.detail(request, reply, { connectionId, state: { errors: { keys: fieldErrorsOf(err) } }, status: 400 })
    }
    await auditOf(deps, request).record({
      action: 'api_key.rotate',
      target: { connection_id: connectionId, key_id: keyId, new_key_id: rotated.id },
      details: { previous_until: rotated.previous.revoked_at },
    })
    const until = rotated.previous.revoked_at ?? ''
    const stopped = Date.parse(until) <= deps.clock.now()
    return redirectToReveal(deps, request, reply, {
      title: 'API key rotated',
      label: 'New API key',
      secret: rotated.key,
      note: `copy it now: it is not shown again. ${stopped ? `The old key stopped working at once (${exactUtc(until)}).` : `The old key works until ${exactUtc(until)}.`}`,
      back: { path: connectionPath(connectionId), text: 'Back to the connection' },
    })
  })

  // A rotation with no grace asks first: the row's Rotate with "None: at once" posts without the
  // confirmation and is sent here; only this page's form (confirm=yes) rotates.
  scope.get(`${CONNECTIONS_PATH}/:connectionId/keys/:keyId/rotate-now`, { schema: { hide: true, params: KeyParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId, keyId } = request.params
    const connection = await getConnection(deps, account.id, connectionId)
    const key = await getApiKey(deps, account.id, connectionId, keyId)
    return sendPage(reply, { account, current: CONNECTIONS_PATH, flash: null, ...rotateNowQuestionView({ connection, key, now: deps.clock.now() }) })
  })

  // issue 29, D7: revoking asks first. The row's Revoke (and "Revoke now" during a grace) is a GET
  // form to this question, which names the key and when it stops; only its form's post revokes.
  scope.get(
    `${CONNECTIONS_PATH}/:connectionId/keys/:keyId/revoke`,
    { schema: { hide: true, params: KeyParams, querystring: GraceQuery } },
    async (request, reply) => {
      const { account } = sessionOf(request)
      const { connectionId, keyId } = request.params
      // another account's connection or key is not found, before anything names it
      const connection = await getConnection(deps, account.id, connectionId)
      const key = await getApiKey(deps, account.id, connectionId, keyId)
      const grace = graceOf(request.query.grace_seconds === undefined ? {} : { grace_seconds: request.query.grace_seconds })
      if (!grace.ok) return pages.detail(request, reply, { connectionId, state: { errors: { keys: grace.errors } }, status: 400 })
      const graceSeconds = grace.seconds ?? 0
      const stopsAt = new Date(deps.clock.now() + graceSeconds * 1000).toISOString()
      return sendPage(reply, {
        account,
        current: CONNECTIONS_PATH,
        flash: null,
        ...revokeQuestionView({ connection, key, graceSeconds, stopsAt, now: deps.clock.now() }),
      })
    },
  )

  scope.post(`${CONNECTIONS_PATH}/:connectionId/keys/:keyId/revoke`, { schema: { hide: true, params: KeyParams, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { connectionId, keyId } = request.params
    const grace = graceOf(request.body)
    if (!grace.ok) return pages.detail(request, reply, { connectionId, state: { errors: { keys: grace.errors } }, status: 400 })
    const graceSeconds = grace.seconds ?? 0
    if (!isConfirmed(request.body)) {
      // a post without the confirmation (crafted, or a page from before the question) is sent to
      // the question; another account's key is 404 first, as the question would answer
      await getApiKey(deps, account.id, connectionId, keyId)
      return redirectTo(reply, `${revokePath(connectionId, keyId)}?grace_seconds=${graceSeconds}`)
    }
    // a key that already stops by then (Back to the question and its form again, a second tab):
    // nothing changes, so nothing is recorded; the flash says so. 404 first for another account's.
    const current = await getApiKey(deps, account.id, connectionId, keyId)
    const nowMs = deps.clock.now()
    if (current.revoked_at !== null && Date.parse(current.revoked_at) <= nowMs + graceSeconds * 1000) {
      return redirectTo(reply, connectionPath(connectionId), Date.parse(current.revoked_at) <= nowMs ? 'key-already-revoked' : 'key-revoke-already-scheduled')
    }
    const withEntry = auditOf(deps, request).change(() => ({
      action: 'api_key.revoke',
      target: { connection_id: connectionId, key_id: keyId },
      details: { grace_seconds: graceSeconds },
    }))
    await revokeApiKey(withEntry, account.id, connectionId, keyId, graceSeconds)
    return redirectTo(reply, connectionPath(connectionId), graceSeconds === 0 ? 'key-revoked' : 'key-revoke-scheduled')
  })
}
