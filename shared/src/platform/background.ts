import type { PlatformConfig } from '../config/config.ts'
import type { ServiceName } from '../config/services.ts'

/**
 * What a service runs besides its HTTP app, decided here and nowhere else (server.ts of each
 * service and scripts/start-local.ts ask this function).
 *
 * - A service process (`server.ts`, as deployed): with Pub/Sub, Pub/Sub pushes to the service's
 *   /pubsub/* routes (infra/pubsub.tf declares push subscriptions only), so nothing pulls: a pull
 *   consumer would ask for a subscription Terraform never creates, or double-process if someone
 *   did. It pulls only from the embedded queue, which cannot push. With Cloud Tasks, Cloud Tasks
 *   calls /tasks/deliver; the embedded scheduler instead runs its tasks in process.
 * - The single-process local stack (`npm start`): nobody pushes to it, whatever the queue (the
 *   embedded one, or the Pub/Sub emulator without push subscriptions), so it pulls.
 */
export interface BackgroundPlan {
  /** topics this process consumes by pulling */
  pull: Array<'contact-batches' | 'visit-events'>
  /** run the embedded task scheduler's due tasks in process */
  taskRunner: boolean
}

export type Host = 'service' | 'local-stack'

const CONSUMES: Record<ServiceName, BackgroundPlan['pull']> = {
  'edge-ingest': [],
  'portal-api': [],
  'upsert-worker': ['contact-batches'],
  'webhook-dispatcher': ['visit-events'],
}

export function backgroundFor(service: ServiceName, config: Pick<PlatformConfig, 'queueBackend' | 'tasksBackend'>, host: Host = 'service'): BackgroundPlan {
  const pulls = host === 'local-stack' || config.queueBackend === 'embedded'
  return {
    pull: pulls ? [...CONSUMES[service]] : [],
    taskRunner: service === 'webhook-dispatcher' && config.tasksBackend === 'embedded',
  }
}

export function isIdle(plan: BackgroundPlan): boolean {
  return plan.pull.length === 0 && !plan.taskRunner
}
