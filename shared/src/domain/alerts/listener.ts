import type { EndpointHealthChanged, EndpointHealthListener } from '../../ports/listeners.ts'
import { alertsOf } from '../tenants/alerts.ts'
import { alertOf } from './alert.ts'
import { sendAlert, type AlertDeps } from './send.ts'

/**
 * Endpoint alerts outside the portal (Settings, "Alerts"; docs/webhooks.md, "Endpoint alerts"):
 * when one of an account's endpoints starts failing, is disabled or works again, the account's
 * alert email and alert webhook hear of it, once per change (the endpoint-failing listener tells
 * a change only when it writes the endpoint's mark, never per attempt).
 *
 * Failure contract: never throws into the delivery task (sendAlert logs a channel that fails;
 * a tenant store that cannot be read is logged by tellListeners). The delivery that caused the
 * change is recorded before this runs, and its outcome does not depend on it. An alert lost here
 * is not made again: the change is already written.
 */
export function endpointAlertsListener(deps: AlertDeps): EndpointHealthListener {
  return {
    name: 'endpoint alerts',
    async onEndpointHealthChanged(change: EndpointHealthChanged) {
      const account = await deps.tenants.getAccount(change.endpoint.account_id)
      if (!account) return
      const settings = alertsOf(account)
      if (!settings.email && !settings.webhook) return
      await sendAlert(deps, settings, alertOf(deps.config, change))
    },
  }
}
