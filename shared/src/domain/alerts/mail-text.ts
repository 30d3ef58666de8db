import type { EndpointAlert } from '../../contract/endpoint-alert.ts'
import type { AlertMessage } from '../../ports/alert-mail.ts'

/** What happened, in a few words (the subject's and the first line's). */
function headline(alert: EndpointAlert): string {
  switch (alert.type) {
    case 'endpoint.failing':
      return 'is failing'
    case 'endpoint.disabled':
      return 'was disabled'
    case 'endpoint.recovered':
      return 'works again'
  }
}

/** The details of the change, one line each. */
function details(alert: EndpointAlert): string[] {
  switch (alert.type) {
    case 'endpoint.failing':
      return [
        `Failing since: ${alert.since} (UTC)`,
        `Deliveries failed in a row: ${alert.consecutive_failures} (alerts start at half of ${alert.threshold})`,
        `Last error: ${alert.last_error ?? 'none recorded'}`,
        'Deliveries keep their retry schedule: fix the receiver and they go through.',
      ]
    case 'endpoint.disabled':
      return [`Disabled at: ${alert.since} (UTC)`, `Why: ${alert.reason}`, 'Nothing is sent to it until you enable it again on its page.']
    case 'endpoint.recovered':
      return [`It had been failing since: ${alert.since} (UTC)`, 'The last delivery was answered 200.']
  }
}

/** The alert as a plain-text email to `to`. */
export function alertMessage(alert: EndpointAlert, to: string): AlertMessage {
  const name = alert.endpoint.name ?? alert.endpoint.url
  const prefix = alert.test ? '[Test] ' : ''
  const lines = [
    ...(alert.test ? ['This is a test alert sent from the Settings screen: nothing happened to any endpoint.', ''] : []),
    `Your webhook endpoint ${name} ${headline(alert)}.`,
    '',
    `Endpoint: ${alert.endpoint.url}`,
    ...details(alert),
    '',
    `See it in the portal: ${alert.portal_url}`,
    '',
    `Alert ${alert.id} (${alert.type}). You get this email because this address is set under Settings, Alerts.`,
  ]
  return { to, subject: `${prefix}Webhook endpoint ${name} ${headline(alert)}`, text: `${lines.join('\n')}\n`, alertId: alert.id }
}
