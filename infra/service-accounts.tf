# One service account per Cloud Run service, plus the identities Pub/Sub push and Cloud Tasks
# present (OIDC) when they call the internal services. Least privilege: each role below is
# granted on the one resource that needs it.

locals {
  service_names = ["edge-ingest", "portal-api", "upsert-worker", "webhook-dispatcher"]
}

resource "google_service_account" "service" {
  for_each     = toset(local.service_names)
  account_id   = each.value
  display_name = "Cloud Run service ${each.value}"
}

resource "google_service_account" "pubsub_push" {
  account_id   = "pubsub-push"
  display_name = "Identity of Pub/Sub push subscriptions (OIDC)"
}

resource "google_service_account" "tasks_invoker" {
  account_id   = "tasks-invoker"
  display_name = "Identity Cloud Tasks presents to webhook-dispatcher (OIDC)"
}

locals {
  sa           = { for k, v in google_service_account.service : k => v.email }
  pubsub_agent = "service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
}

# Firestore: every service reads tenants; edge/portal/worker/dispatcher write their own state.
resource "google_project_iam_member" "datastore_user" {
  for_each = toset(local.service_names)
  project  = var.project_id
  role     = "roles/datastore.user"
  member   = "serviceAccount:${local.sa[each.value]}"
}

# Pub/Sub push may mint OIDC tokens for its push identity.
resource "google_service_account_iam_member" "pubsub_token_creator" {
  service_account_id = google_service_account.pubsub_push.name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = "serviceAccount:${local.pubsub_agent}"
}

# The dispatcher creates per-endpoint queues and enqueues tasks that carry the invoker's OIDC token.
resource "google_project_iam_member" "dispatcher_tasks_admin" {
  project = var.project_id
  role    = "roles/cloudtasks.queueAdmin"
  member  = "serviceAccount:${local.sa["webhook-dispatcher"]}"
}

resource "google_project_iam_member" "dispatcher_tasks_enqueuer" {
  project = var.project_id
  role    = "roles/cloudtasks.enqueuer"
  member  = "serviceAccount:${local.sa["webhook-dispatcher"]}"
}

resource "google_service_account_iam_member" "dispatcher_acts_as_invoker" {
  service_account_id = google_service_account.tasks_invoker.name
  role               = "roles/iam.serviceAccountUser"
  member             = "serviceAccount:${local.sa["webhook-dispatcher"]}"
}
