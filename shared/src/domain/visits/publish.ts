import type { PlatformDeps } from '../../ports/deps.ts'
import { VISIT_EVENT_VERSION, type VisitEvent } from '../../contract/visit-event.ts'

/** Puts a visit event on the visit-events topic exactly as the identification pipeline does. */
export async function publishVisitEvent(deps: Pick<PlatformDeps, 'queue'>, event: VisitEvent): Promise<string> {
  return deps.queue.publish('visit-events', Buffer.from(JSON.stringify(event)), { v: VISIT_EVENT_VERSION })
}
