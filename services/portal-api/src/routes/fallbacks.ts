import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'

/** POST /api/contacts and /api/contacts/webhook/{sourceId} (contract 4.6; issue 3) */
export function registerFallbackRoutes(_app: App, _deps: PlatformDeps): void {
  // placeholder until its issue lands
}
