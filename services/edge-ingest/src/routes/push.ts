import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'

/** POST /v1/contacts, /v1/contacts/{sourceId}, /v1/contacts/partnercrm (contract 4.3–4.5). */
export function registerPushRoutes(_app: App, _deps: PlatformDeps): void {
  // implemented by the ingestion work (issue 3)
}
