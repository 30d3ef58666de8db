import type { BaseLogger, Bindings } from 'pino'
import type { Clock } from '../model/clock.ts'
import type { PlatformConfig } from '../config/config.ts'
import type { ContactStore } from './contact-store.ts'
import type { TenantStore } from './tenant-store.ts'
import type { TenantLookups } from './tenant-lookups.ts'
import type { DeliveryLog } from './delivery-log.ts'
import type { IdempotencyClaims } from './idempotency-claims.ts'
import type { LinkTokenStore } from './link-tokens.ts'
import type { PortalAccessStore } from './portal-access.ts'
import type { AuditLogStore } from './audit-log.ts'
import type { RateLimiter } from './rate-limiter.ts'
import type { PushLog } from './push-log.ts'
import type { BrandAssets } from './brand-assets.ts'
import type { Queue } from './queue.ts'
import type { TaskScheduler } from './task-scheduler.ts'
import type { Secrets } from './secrets.ts'
import type { WebhookSender } from './webhook-sender.ts'
import type { Counters } from './counters.ts'
import type { DeliveryTargets } from './delivery-targets.ts'
import type { Listeners } from './listeners.ts'
import type { AlertMail } from './alert-mail.ts'

/*
 * The dependencies a domain function receives: types only. Domain code imports this module, never
 * the composition (platform/deps.ts builds the adapters; importing it would load every Google client).
 */

/**
 * What domain code logs through: the process's logger, or a request's own (`request.log`, through
 * http/request-deps.ts), whose lines carry the request id and trace as bindings.
 */
export interface DomainLogger extends BaseLogger {
  child(bindings: Bindings): DomainLogger
}

/** Everything a service needs from the outside world, chosen once at start-up. */
export interface PlatformDeps {
  config: PlatformConfig
  logger: DomainLogger
  clock: Clock
  contacts: ContactStore
  /** tenant configuration: management reads and every write (a write clears this instance's lookup cache) */
  tenants: TenantStore
  /** the tenant reads of serving traffic, cached with revocation bounded (ports/tenant-lookups.ts) */
  tenantLookups: TenantLookups
  /** the webhook delivery log (domain/webhooks) */
  deliveries: DeliveryLog
  /** "handled once" keys of redelivered events (domain/visits) */
  claims: IdempotencyClaims
  /** opaque tracked-link tokens (domain/links) */
  linkTokens: LinkTokenStore
  /** portal sign-in links and sessions (domain/portal) */
  portalAccess: PortalAccessStore
  /** what the portal changed (domain/audit) */
  auditLog: AuditLogStore
  rateLimiter: RateLimiter
  /** plain counters shared by every instance: endpoint health, the queue pool's count (ports/counters.ts) */
  counters: Counters
  /** recent pushes per connection, for the portal's inbound debugger (domain/activity/push-log.ts) */
  pushLog: PushLog
  /** the tenants' portal logos, apart from the account records (domain/tenants/logo.ts) */
  brandAssets: BrandAssets
  queue: Queue
  tasks: TaskScheduler
  secrets: Secrets
  /** signed webhook POSTs to receivers (SSRF-filtered) */
  webhookSender: WebhookSender
  /** where a delivery goes: a tenant integration, an account's alert webhook or the operator's endpoint (ports/delivery-targets.ts) */
  deliveryTargets: DeliveryTargets
  /** the tenants' alert emails (ports/alert-mail.ts; ALERT_EMAIL) */
  alertMail: AlertMail
  /** who reacts to the hot paths' outcomes, built at the composition root (platform/listeners.ts) */
  listeners: Listeners
  /** closes every adapter (idempotent) */
  close(): Promise<void>
}
