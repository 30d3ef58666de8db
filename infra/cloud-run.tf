# The four Cloud Run v2 services, each with its own service account and its secrets from
# Secret Manager. Cloud Build (and deploy/roll-out.sh) deploys new images with
# `gcloud run services update --image`, so Terraform ignores the image after creation and owns
# everything else: environment, secrets, probes, scaling, identity.

locals {
  # the public services' timeout (150 s) sits above the app's own 120 s request timeout
  # (shared/src/http/timeouts.ts), so a slow 8 MiB upload meets our 408, not a cut connection
  service_settings = {
    "edge-ingest"        = { ingress = "INGRESS_TRAFFIC_INTERNAL_LOAD_BALANCER", concurrency = 80, memory = "1Gi", cpu = "1", timeout = "150s", min = 1 }
    "portal-api"         = { ingress = "INGRESS_TRAFFIC_INTERNAL_LOAD_BALANCER", concurrency = 80, memory = "1Gi", cpu = "1", timeout = "150s", min = 0 }
    "upsert-worker"      = { ingress = "INGRESS_TRAFFIC_INTERNAL_ONLY", concurrency = 4, memory = "2Gi", cpu = "2", timeout = "600s", min = 0 }
    "webhook-dispatcher" = { ingress = "INGRESS_TRAFFIC_INTERNAL_ONLY", concurrency = 80, memory = "512Mi", cpu = "1", timeout = "60s", min = 0 }
  }
}

resource "google_cloud_run_v2_service" "service" {
  for_each            = local.service_settings
  name                = each.key
  location            = var.region
  ingress             = each.value.ingress
  deletion_protection = false

  template {
    service_account                  = local.sa[each.key]
    timeout                          = each.value.timeout
    max_instance_request_concurrency = each.value.concurrency
    scaling {
      min_instance_count = each.value.min
      max_instance_count = var.max_instances
    }
    containers {
      image = var.initial_image
      ports {
        container_port = 8080
      }
      resources {
        limits = {
          cpu    = each.value.cpu
          memory = each.value.memory
        }
        cpu_idle = each.key != "upsert-worker"
      }
      # every variable a service gets is declared once, in service-env.tf
      dynamic "env" {
        for_each = local.service_env[each.key]
        content {
          name  = env.key
          value = env.value
        }
      }
      dynamic "env" {
        for_each = local.service_secret_env[each.key]
        content {
          name = env.key
          value_source {
            secret_key_ref {
              secret  = google_secret_manager_secret.platform[env.value].secret_id
              version = "latest"
            }
          }
        }
      }
      startup_probe {
        http_get {
          path = "/healthz"
        }
        period_seconds    = 2
        failure_threshold = 15
      }
      liveness_probe {
        http_get {
          path = "/healthz"
        }
        period_seconds = 30
      }
    }
  }

  lifecycle {
    # Rolling out (Cloud Build, deploy/roll-out.sh) changes the image; gcloud marks the new
    # revision with a nonce label or, for a restart after a secret rotation, a revision name
    # (docs/operations.md). Terraform sets none of these, so it must not take them back.
    ignore_changes = [template[0].containers[0].image, template[0].labels, template[0].revision, client, client_version]
  }

  # a revision starts only if every secret it mounts has a version its account may read
  depends_on = [google_secret_manager_secret_version.initial, time_sleep.iam_propagation, google_project_service.enabled]
}


# Public services behind the load balancer: anyone may invoke (they authenticate themselves).
resource "google_cloud_run_v2_service_iam_member" "public" {
  for_each = toset(["edge-ingest", "portal-api"])
  name     = google_cloud_run_v2_service.service[each.value].name
  location = var.region
  role     = "roles/run.invoker"
  member   = "allUsers"
}

# Internal services: only the push identities may invoke them.
resource "google_cloud_run_v2_service_iam_member" "pubsub_invoker" {
  for_each = toset(["upsert-worker", "webhook-dispatcher"])
  name     = google_cloud_run_v2_service.service[each.value].name
  location = var.region
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_service_account.pubsub_push.email}"
}

resource "google_cloud_run_v2_service_iam_member" "tasks_invoker" {
  name     = google_cloud_run_v2_service.service["webhook-dispatcher"].name
  location = var.region
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_service_account.tasks_invoker.email}"
}
