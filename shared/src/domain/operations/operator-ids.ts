/**
 * The operator's endpoint as the delivery machinery sees it: operational events are deliveries
 * (domain/webhooks/deliveries.ts) to this reserved integration id, of this reserved account, so
 * they get the same signed POST, retry schedule, delivery log, sweep and SSRF checks as tenant
 * webhooks, with no second sender. No tenant integration can have this id (tenant ids are `int_…`).
 * Apart from target.ts (which reads the signing secret): code that only creates an event's
 * delivery (emit.ts, in every service through the listeners) never loads the secret
 * reader, and infra/iam.tf grants the secret to the dispatcher alone (test/infra/iam.test.ts).
 */
export const OPERATOR_INTEGRATION_ID = 'operator-events'
export const OPERATOR_ACCOUNT_ID = '_operator'
