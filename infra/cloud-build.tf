# The identity Cloud Build runs cloudbuild.yaml as (`gcloud builds submit --service-account=…`,
# the command is the output `cloud_build_submit`), with exactly what the build does:
#   - read the uploaded source       storage.objectViewer on the source bucket below
#   - push the four images           artifactregistry.writer on the image repository
#   - roll out a new image           run.developer on each of the four services
#   - deploy revisions that run as   iam.serviceAccountUser on each runtime account
#     the runtime accounts (actAs)
#   - write its logs                 logging.logWriter (logs go to Cloud Logging only; a
#                                    user-chosen build account cannot write the default bucket)

resource "google_service_account" "cloud_build" {
  account_id   = "cloud-build"
  display_name = "Cloud Build: test, build, push and roll out the four images"
  depends_on   = [google_project_service.enabled]
}

locals {
  cloud_build_member = "serviceAccount:${google_service_account.cloud_build.email}"
}

# `gcloud builds submit --gcs-source-staging-dir=gs://<this bucket>/source` uploads the source here
# (filtered by .gcloudignore); old uploads expire.
resource "google_storage_bucket" "build_source" {
  name                        = "${var.project_id}-build-source"
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = true
  lifecycle_rule {
    condition {
      age = 7
    }
    action {
      type = "Delete"
    }
  }
  depends_on = [google_project_service.enabled]
}

resource "google_storage_bucket_iam_member" "cloud_build_source_reader" {
  bucket = google_storage_bucket.build_source.name
  role   = "roles/storage.objectViewer"
  member = local.cloud_build_member
}

resource "google_artifact_registry_repository_iam_member" "cloud_build_writer" {
  location   = google_artifact_registry_repository.images.location
  repository = google_artifact_registry_repository.images.name
  role       = "roles/artifactregistry.writer"
  member     = local.cloud_build_member
}

resource "google_cloud_run_v2_service_iam_member" "cloud_build_deployer" {
  for_each = toset(local.service_names)
  name     = google_cloud_run_v2_service.service[each.key].name
  location = var.region
  role     = "roles/run.developer"
  member   = local.cloud_build_member
}

resource "google_service_account_iam_member" "cloud_build_acts_as_runtime" {
  for_each           = toset(local.service_names)
  service_account_id = google_service_account.service[each.key].name
  role               = "roles/iam.serviceAccountUser"
  member             = local.cloud_build_member
}

resource "google_project_iam_member" "cloud_build_log_writer" {
  project = var.project_id
  role    = "roles/logging.logWriter"
  member  = local.cloud_build_member
}
