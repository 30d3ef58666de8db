import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { ScreenDeclaration } from '../kit/screens.ts'
import { registerDeliveryDebugger } from './delivery-debugger.ts'
import { registerDeliveryReplay } from './delivery-replay.ts'
import { registerEndpointDelete } from './endpoint-delete.ts'
import { registerEndpointList } from './endpoint-list.ts'
import { registerEndpointPage } from './endpoint-page.ts'
import { registerEndpointSettings } from './endpoint-settings.ts'
import { registerRecoverScreens } from './recover.ts'
import { registerSigningSecret } from './signing-secret.ts'
import { registerTestEvent } from './send-test-event.ts'
import { WEBHOOKS_PATH } from './paths.ts'

/**
 * Webhooks (docs/portal.md, "Webhooks"): the account's integrations, created and changed through
 * the management API's domain functions; the signing secret revealed or rotated with a grace; the
 * delivery log with filters (status, test or real events, one event id) and paging; replay; a
 * test event. Every change is in the audit log (never the secret). One concern per file.
 */
function registerWebhookScreens(scope: App, deps: PlatformDeps): void {
  registerEndpointList(scope, deps)
  registerEndpointPage(scope, deps)
  registerEndpointSettings(scope, deps)
  registerSigningSecret(scope, deps)
  registerTestEvent(scope, deps)
  registerDeliveryReplay(scope, deps)
  registerDeliveryDebugger(scope, deps)
  registerRecoverScreens(scope, deps)
  registerEndpointDelete(scope, deps)
}

/** Webhooks: endpoints, their health, the delivery log and debugger, recovery. */
export const webhooksScreen: ScreenDeclaration = {
  path: WEBHOOKS_PATH,
  nav: 'Webhooks',
  flashes: {
    'integration-created': 'Webhook created.',
    'integration-updated': 'Webhook updated.',
    'integration-deleted': 'Webhook deleted.',
    'delivery-replayed': 'Delivery queued again.',
    'test-sent': 'Test event queued.',
    'secret-grace-ended': 'The previous signing secret no longer signs: deliveries carry the new secret’s signature only.',
    'waiting-retried': 'The deliveries waiting for a retry are queued to be sent now.',
    'waiting-partly-retried':
      'The replay limit was reached: some deliveries waiting for a retry are queued to be sent now, the rest keep waiting. Retry everything waiting again in a minute.',
  },
  register: registerWebhookScreens,
}
