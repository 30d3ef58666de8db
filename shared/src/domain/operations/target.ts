import { randomBytes } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'
import type { IntegrationRecord } from '../../model/records.ts'
import { OPERATOR_ACCOUNT_ID, OPERATOR_INTEGRATION_ID } from './operator-ids.ts'

const OPERATOR_SECRET_NAME = 'operator-events-secret'

type TargetDeps = Pick<PlatformDeps, 'config' | 'secrets'>

const loaded = new WeakMap<object, Promise<string>>()

/**
 * The signing secret: OPERATOR_EVENTS_SECRET wins (local, tests), then the secret store
 * (`operator-events-secret`, Secret Manager in Google Cloud); on the embedded store a missing
 * one is created once, so a local stack signs with a stable secret found in its secrets file.
 */
function operatorSigningSecret(deps: TargetDeps): Promise<string> {
  if (deps.config.operatorEventsSecret) return Promise.resolve(deps.config.operatorEventsSecret)
  let value = loaded.get(deps.secrets)
  if (!value) {
    value = (async () => {
      const stored = await deps.secrets.get(OPERATOR_SECRET_NAME)
      if (stored) return stored
      if (deps.config.secretsBackend !== 'embedded')
        throw new Error(`secret ${OPERATOR_SECRET_NAME} is missing from the ${deps.config.secretsBackend} secret store`)
      await deps.secrets.addVersion(OPERATOR_SECRET_NAME, `whsec_${randomBytes(24).toString('base64')}`)
      const created = await deps.secrets.get(OPERATOR_SECRET_NAME)
      if (!created) throw new Error(`secret ${OPERATOR_SECRET_NAME} could not be created`)
      return created
    })()
    // a failed load is tried again on the next delivery, not cached
    value.catch(() => loaded.get(deps.secrets) === value && loaded.delete(deps.secrets))
    loaded.set(deps.secrets, value)
  }
  return value
}

/**
 * The operator's endpoint as an integration record (never stored), or null when
 * OPERATOR_EVENTS_URL is unset: a delivery to it then ends as failed, like one to a deleted
 * integration.
 */
export async function operatorTarget(deps: TargetDeps): Promise<IntegrationRecord | null> {
  const url = deps.config.operatorEventsUrl
  if (!url) return null
  const epoch = new Date(0).toISOString()
  return {
    id: OPERATOR_INTEGRATION_ID,
    account_id: OPERATOR_ACCOUNT_ID,
    url,
    payload_version: 2,
    tiers: { contact_handles: false, sensitive_traits: false },
    active: true,
    disabled_reason: null,
    signing_secrets: [{ secret: await operatorSigningSecret(deps), created_at: epoch, expires_at: null }],
    created_at: epoch,
    updated_at: epoch,
  }
}
