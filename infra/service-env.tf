# The environment Terraform gives each Cloud Run service: the one place that says which variable
# each service gets. `npm run start:cloud` reads this file to start the services locally with
# exactly this environment, so keep every value a literal, a var./local. reference, a service
# account's .email, or a string template of those.

locals {
  # deterministic Cloud Run URLs (https://SERVICE-PROJECT_NUMBER.REGION.run.app)
  service_url     = { for name in local.service_names : name => "https://${name}-${data.google_project.this.number}.${var.region}.run.app" }
  portal_base_url = "https://${var.portal_domain}"
  common_env = {
    NODE_ENV                 = "production"
    GOOGLE_CLOUD_PROJECT     = var.project_id
    GOOGLE_CLOUD_REGION      = var.region
    STORE_BACKEND            = "firestore"
    QUEUE_BACKEND            = "pubsub"
    SECRETS_BACKEND          = "secretmanager"
    TASKS_BACKEND            = "cloudtasks"
    EDGE_DOMAIN              = var.edge_domain
    EDGE_BASE_URL_TEMPLATE   = "https://{public_id}.${var.edge_domain}"
    PORTAL_BASE_URL          = local.portal_base_url
    PARTNERCRM_TOKEN_CUTOVER = var.partnercrm_token_cutover
    TASKS_SERVICE_ACCOUNT    = google_service_account.tasks_invoker.email
    LOG_LEVEL                = "info"
  }
  # the whole environment of each service (plain values; secrets are in service_secret_env)
  service_env = {
    "edge-ingest" = local.common_env
    "portal-api" = merge(local.common_env, {
      DISPATCHER_URL = local.service_url["webhook-dispatcher"]
    })
    "upsert-worker" = merge(local.common_env, {
      PUSH_AUDIENCE = local.service_url["upsert-worker"]
    })
    "webhook-dispatcher" = merge(local.common_env, {
      PUSH_AUDIENCE  = local.service_url["webhook-dispatcher"]
      DISPATCHER_URL = local.service_url["webhook-dispatcher"]
    })
  }
  # secrets each service reads as environment variables (variable -> secret id)
  service_secret_env = {
    "edge-ingest"        = { KEY_PEPPER = "key-pepper" }
    "portal-api"         = { KEY_PEPPER = "key-pepper", OPERATOR_TOKEN = "operator-token" }
    "upsert-worker"      = { KEY_PEPPER = "key-pepper" }
    "webhook-dispatcher" = { KEY_PEPPER = "key-pepper", OPERATOR_TOKEN = "operator-token" }
  }
}
