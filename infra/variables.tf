variable "project_id" {
  description = "Google Cloud project that hosts the platform (an empty project is fine: every API is enabled here)."
  type        = string
}

variable "region" {
  description = "Region of Cloud Run, Cloud Tasks, Artifact Registry and the serverless NEGs."
  type        = string
  default     = "europe-west1"
}

variable "firestore_location" {
  description = "Location of the Firestore database (a region or a multi-region such as eur3)."
  type        = string
  default     = "eur3"
}

variable "edge_domain" {
  description = "Edge domain: tenants call <customer_public_id>.<edge_domain>. A wildcard certificate covers *.<edge_domain>."
  type        = string
}

variable "portal_domain" {
  description = "Host name of the portal origin (portal-api), e.g. portal.example.com."
  type        = string
}

variable "artifact_repository" {
  description = "Artifact Registry Docker repository id that Cloud Build pushes the four images to."
  type        = string
  default     = "lsv"
}

variable "initial_image" {
  description = "Image used when a service is first created, before Cloud Build deploys the real one (Cloud Build changes only the image afterwards)."
  type        = string
  default     = "us-docker.pkg.dev/cloudrun/container/hello"
}

variable "operator_events_url" {
  description = "Where operational events (endpoint.failing, endpoint.disabled, batch.dead_lettered, queue.created_late) are POSTed, signed with the Secret Manager secret operator-events-secret (OPERATOR_EVENTS_URL, docs/operations.md). Empty: they are only logged."
  type        = string
  default     = ""
}

variable "tenant_alert_email" {
  description = "Where the tenants' endpoint alert emails go (ALERT_EMAIL, docs/deploy.md \"Alert emails\"): off, or smtp through the relay in the Secret Manager secret alert-smtp-url (add its URL as a new version first) as tenant_alert_email_from."
  type        = string
  default     = "off"
}

variable "tenant_alert_email_from" {
  description = "The sender of alert emails (ALERT_EMAIL_FROM), an address your SMTP relay accepts for your domain; required with tenant_alert_email = smtp."
  type        = string
  default     = ""
}

variable "partnercrm_token_cutover" {
  description = "ISO-8601 instant after which partner CRM webhooks without a token answer 401; empty keeps accepting and flagging them."
  type        = string
  default     = ""
}

variable "max_instances" {
  description = "Upper bound of instances per Cloud Run service."
  type        = number
  default     = 100
}

variable "webhook_endpoint_rate" {
  description = "Deliveries per second to one webhook endpoint (WEBHOOK_ENDPOINT_RATE): the rate of each per-endpoint Cloud Tasks queue the services create at run time. Cloud Tasks allows at most 500 per queue."
  type        = number
  default     = 100
  validation {
    condition     = var.webhook_endpoint_rate >= 1 && var.webhook_endpoint_rate <= 500
    error_message = "webhook_endpoint_rate must be between 1 and 500 (Cloud Tasks' per-queue maximum)."
  }
}

variable "task_queue_pool_size" {
  description = "Shared delivery queues (TASK_QUEUE_POOL_SIZE) for the webhook endpoints past task_queue_dedicated_limit: tasks.tf creates webhook-pool-00 and on. Never lower it: a pool queue is never deleted (tasks.tf)."
  type        = number
  default     = 32
  validation {
    condition     = var.task_queue_pool_size >= 1 && var.task_queue_pool_size <= 100
    error_message = "task_queue_pool_size must be between 1 and 100."
  }
}

variable "task_queue_dedicated_limit" {
  description = "Webhook endpoints that get a Cloud Tasks queue of their own (TASK_QUEUE_DEDICATED_LIMIT); later ones share the pool. With task_queue_pool_size it must stay under the project's queue quota (1,000 per region by default)."
  type        = number
  default     = 900
  validation {
    condition     = var.task_queue_dedicated_limit >= 0 && var.task_queue_dedicated_limit + var.task_queue_pool_size < 1000
    error_message = "task_queue_dedicated_limit plus task_queue_pool_size must stay under Cloud Tasks' default quota of 1,000 queues per region (raise the quota first, then this check)."
  }
}

variable "alert_email" {
  description = "Email address that receives alerts; empty disables the notification channel."
  type        = string
  default     = ""
}

variable "bigquery_location" {
  description = "Location of the BigQuery dataset that receives contact changes."
  type        = string
  default     = "EU"
}

variable "cloud_armor" {
  description = "Attach the Cloud Armor per-client-address throttle (infra/cloud-armor.tf) to the load balancer's backend services."
  type        = bool
  default     = true
}

variable "cloud_armor_webhook_requests_per_ip_per_minute" {
  description = "Requests per minute one client address may send to the inbound webhook paths (/v1/contacts/..., /api/contacts/webhook/...) of each public service before Cloud Armor answers 429. High: a sending platform delivers for all its customers from a few addresses (docs/capacity.md, \"Cloud Armor\")."
  type        = number
  default     = 60000
  validation {
    # at least the general throttle's minimum; Cloud Armor's throttle accepts at most 1,000,000 per interval
    condition     = var.cloud_armor_webhook_requests_per_ip_per_minute >= 120 && var.cloud_armor_webhook_requests_per_ip_per_minute <= 1000000
    error_message = "cloud_armor_webhook_requests_per_ip_per_minute must be between 120 and 1000000 (Cloud Armor's maximum)."
  }
}

variable "cloud_armor_requests_per_ip_per_minute" {
  description = "Requests per minute one client address may send to each public service before Cloud Armor answers 429 (inbound webhook paths excepted). The default, 6,000, is 50 API keys at the contract's 120 per minute (docs/capacity.md, \"Cloud Armor\")."
  type        = number
  default     = 6000
  validation {
    # Cloud Armor's throttle accepts 1 to 1,000,000 requests per interval; below 120 one key at
    # its contract limit would already be throttled
    condition     = var.cloud_armor_requests_per_ip_per_minute >= 120 && var.cloud_armor_requests_per_ip_per_minute <= 1000000
    error_message = "cloud_armor_requests_per_ip_per_minute must be between 120 (one API key at the contract's limit) and 1000000 (Cloud Armor's maximum)."
  }
}
