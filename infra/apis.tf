# Every API the platform uses. Every other resource depends on google_project_service.enabled,
# directly or through a resource it references (test/infra/terraform.test.ts checks the chain),
# so one apply on an empty project enables the APIs first. serviceusage and cloudresourcemanager
# must be on before Terraform can enable anything (docs/deploy.md, step 1).
locals {
  services = toset([
    "artifactregistry.googleapis.com",
    "bigquery.googleapis.com",
    "certificatemanager.googleapis.com",
    "cloudbuild.googleapis.com",
    "cloudtasks.googleapis.com",
    "cloudtrace.googleapis.com",
    "compute.googleapis.com",
    "firestore.googleapis.com",
    "iam.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
    "pubsub.googleapis.com",
    "run.googleapis.com",
    "secretmanager.googleapis.com",
    "storage.googleapis.com",
  ])
}

resource "google_project_service" "enabled" {
  for_each           = local.services
  service            = each.value
  disable_on_destroy = false
}

data "google_project" "this" {
  project_id = var.project_id
}

# The Pub/Sub service agent signs push tokens, forwards dead letters and writes to BigQuery. It
# is created here (not assumed to exist) so the grants to it never race the API enablement.
resource "google_project_service_identity" "pubsub" {
  provider   = google-beta
  service    = "pubsub.googleapis.com"
  depends_on = [google_project_service.enabled]
}

resource "google_artifact_registry_repository" "images" {
  repository_id = var.artifact_repository
  location      = var.region
  format        = "DOCKER"
  description   = "Images of the four platform services"
  depends_on    = [google_project_service.enabled]
}
