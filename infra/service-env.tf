# The environment Terraform gives each Cloud Run service: the one place that says which variable
# each service gets. `npm run start:cloud` reads this file to start the services locally with
# exactly this environment, so keep every value a literal, a var./local. reference, a service
# account's .email, or a string template of those.
#
# Each service gets only what its code uses (shared/src/config/services.ts is the same table on
# the code side; test/deploy/service-needs.test.ts keeps the two in step). In production a
# missing audience or identity stops the service at start-up, naming the variable.

locals {
  # deterministic Cloud Run URLs (https://SERVICE-PROJECT_NUMBER.REGION.run.app)
  service_url     = { for name in local.service_names : name => "https://${name}-${data.google_project.this.number}.${var.region}.run.app" }
  portal_base_url = "https://${var.portal_domain}"
  # every service: production mode, Firestore, Pub/Sub
  common_env = {
    NODE_ENV             = "production"
    GOOGLE_CLOUD_PROJECT = var.project_id
    STORE_BACKEND        = "firestore"
    QUEUE_BACKEND        = "pubsub"
    LOG_LEVEL            = "info"
    # operational events (docs/operations.md): any service may observe one; empty = logged only
    OPERATOR_EVENTS_URL = var.operator_events_url
  }
  # services that create delivery tasks: Cloud Tasks in the region, each task calling the
  # dispatcher's /tasks/deliver with the tasks-invoker identity and the dispatcher URL as audience
  task_creator_env = {
    TASKS_BACKEND         = "cloudtasks"
    GOOGLE_CLOUD_REGION   = var.region
    DISPATCHER_URL        = local.service_url["webhook-dispatcher"]
    TASKS_SERVICE_ACCOUNT = google_service_account.tasks_invoker.email
    WEBHOOK_ENDPOINT_RATE = var.webhook_endpoint_rate
    # the queue pool (tasks.tf): how many endpoints get a queue of their own, how many queues the rest share
    TASK_QUEUE_DEDICATED_LIMIT = var.task_queue_dedicated_limit
    TASK_QUEUE_POOL_SIZE       = var.task_queue_pool_size
  }
  # the services that send endpoint alert emails: the dispatcher (an endpoint changes state) and
  # portal-api (Settings, "Send a test alert"); the relay's URL is the secret ALERT_SMTP_URL below
  alert_email_env = {
    ALERT_EMAIL      = var.tenant_alert_email
    ALERT_EMAIL_FROM = var.tenant_alert_email_from
  }
  # the whole environment of each service (plain values; secrets are in service_secret_env)
  service_env = {
    "edge-ingest" = merge(local.common_env, {
      SECRETS_BACKEND          = "secretmanager"
      EDGE_DOMAIN              = var.edge_domain
      PARTNERCRM_TOKEN_CUTOVER = var.partnercrm_token_cutover
      # the load balancer appends "client, load balancer" to X-Forwarded-For and Cloud Run's proxy is
      # the socket's peer: two hops are ours, anything further left is the caller's own claim
      TRUSTED_PROXY_HOPS = "2"
    })
    "portal-api" = merge(local.common_env, local.task_creator_env, local.alert_email_env, {
      SECRETS_BACKEND          = "secretmanager"
      EDGE_BASE_URL_TEMPLATE   = "https://{public_id}.${var.edge_domain}"
      PORTAL_BASE_URL          = local.portal_base_url
      PARTNERCRM_TOKEN_CUTOVER = var.partnercrm_token_cutover
      TRUSTED_PROXY_HOPS       = "2"
    })
    "upsert-worker" = merge(local.common_env, {
      # Pub/Sub push on /pubsub/contact-batches: the token's aud and email
      PUSH_AUDIENCE        = local.service_url["upsert-worker"]
      PUSH_SERVICE_ACCOUNT = google_service_account.pubsub_push.email
      # invoker IAM on: Cloud Run's front end verifies the token and strips its signature
      INTERNAL_AUTH = "front-end"
    })
    "webhook-dispatcher" = merge(local.common_env, local.task_creator_env, local.alert_email_env, {
      SECRETS_BACKEND = "secretmanager"
      PORTAL_BASE_URL = local.portal_base_url
      # Pub/Sub push on /pubsub/visit-events; /tasks/deliver checks DISPATCHER_URL + TASKS_SERVICE_ACCOUNT
      PUSH_AUDIENCE        = local.service_url["webhook-dispatcher"]
      PUSH_SERVICE_ACCOUNT = google_service_account.pubsub_push.email
      # invoker IAM on: Cloud Run's front end verifies the tokens and strips their signature
      INTERNAL_AUTH = "front-end"
    })
  }
  # secrets each service reads as environment variables (variable -> secret id): the operator
  # token only on portal-api (management API), the key pepper where keys and tokens are hashed,
  # the alert emails' SMTP relay where alerts are sent
  service_secret_env = {
    "edge-ingest"        = { KEY_PEPPER = "key-pepper" }
    "portal-api"         = { KEY_PEPPER = "key-pepper", OPERATOR_TOKEN = "operator-token", ALERT_SMTP_URL = "alert-smtp-url" }
    "upsert-worker"      = {}
    "webhook-dispatcher" = { ALERT_SMTP_URL = "alert-smtp-url" }
  }
}
