# One service account per Cloud Run service, plus the identities Pub/Sub push and Cloud Tasks
# present (OIDC) when they call the internal services. Least privilege: each role is granted on
# the one resource that needs it; the two project-level grants below say why they cannot be
# narrower.

locals {
  service_names = ["edge-ingest", "portal-api", "upsert-worker", "webhook-dispatcher"]
  # services that create delivery tasks: the dispatcher (deliveries, retries) and portal-api
  # (delivery replay); both also create the per-endpoint queue on first use (ensureEndpointQueue)
  task_creators = ["portal-api", "webhook-dispatcher"]
}

resource "google_service_account" "service" {
  for_each     = toset(local.service_names)
  account_id   = each.value
  display_name = "Cloud Run service ${each.value}"
  depends_on   = [google_project_service.enabled]
}

resource "google_service_account" "pubsub_push" {
  account_id   = "pubsub-push"
  display_name = "Identity of Pub/Sub push subscriptions (OIDC)"
  depends_on   = [google_project_service.enabled]
}

resource "google_service_account" "tasks_invoker" {
  account_id   = "tasks-invoker"
  display_name = "Identity Cloud Tasks presents to webhook-dispatcher (OIDC)"
  depends_on   = [google_project_service.enabled]
}

locals {
  sa = { for k, v in google_service_account.service : k => v.email }
  # the Pub/Sub service agent; every grant to it also depends on google_project_service_identity.pubsub
  # (apis.tf), which makes sure the agent exists first
  pubsub_agent = "service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
}

# Firestore: every service reads tenants and writes its own state, in the one database. Firestore
# has no per-database IAM resource; an IAM condition on the database name is the documented way
# to scope a project grant to one database.
resource "google_project_iam_member" "datastore_user" {
  for_each = toset(local.service_names)
  project  = var.project_id
  role     = "roles/datastore.user"
  member   = "serviceAccount:${local.sa[each.value]}"
  condition {
    title       = "only-platform-database"
    description = "Firestore database ${google_firestore_database.main.name} only"
    expression  = "resource.name == \"projects/${var.project_id}/databases/${google_firestore_database.main.name}\""
  }
}

# Pub/Sub push may mint OIDC tokens for its push identity.
resource "google_service_account_iam_member" "pubsub_token_creator" {
  service_account_id = google_service_account.pubsub_push.name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = "serviceAccount:${local.pubsub_agent}"
  depends_on         = [google_project_service_identity.pubsub]
}

# Delivery queues are created at run time, one per endpoint (cloud-tasks.tf), so no queue exists
# for a queue-level grant, and Cloud Tasks does not evaluate resource names in IAM conditions.
# The project-level grant is therefore a custom role with exactly the three calls the adapter
# makes (shared/src/adapters/google/cloud-tasks-scheduler.ts): createQueue, updateQueue, createTask.
# queueAdmin would also allow deleting, purging and pausing every queue.
resource "google_project_iam_custom_role" "delivery_queues" {
  role_id     = "lsvDeliveryQueues"
  title       = "Webhook delivery queues"
  description = "Create and re-rate per-endpoint delivery queues and enqueue delivery tasks"
  permissions = ["cloudtasks.queues.create", "cloudtasks.queues.update", "cloudtasks.tasks.create"]
  depends_on  = [google_project_service.enabled]
}

resource "google_project_iam_member" "delivery_queues" {
  for_each = toset(local.task_creators)
  project  = var.project_id
  role     = google_project_iam_custom_role.delivery_queues.name
  member   = "serviceAccount:${local.sa[each.value]}"
}

# A task carries an OIDC token of tasks-invoker: whoever creates it must be allowed to act as it.
resource "google_service_account_iam_member" "task_creators_act_as_invoker" {
  for_each           = toset(local.task_creators)
  service_account_id = google_service_account.tasks_invoker.name
  role               = "roles/iam.serviceAccountUser"
  member             = "serviceAccount:${local.sa[each.value]}"
}

# Each service exports its OpenTelemetry spans to Cloud Trace (shared/src/platform/telemetry.ts;
# docs/operations.md, "Traces"): cloudtrace.traces.patch, nothing else.
resource "google_project_iam_member" "trace_agent" {
  for_each = toset(local.service_names)
  project  = var.project_id
  role     = "roles/cloudtrace.agent"
  member   = "serviceAccount:${local.sa[each.value]}"
}
