# The four Cloud Run v2 services, each with its own service account and its secrets from
# Secret Manager. Cloud Build (and deploy/roll-out.sh) deploys new images with
# `gcloud run services update --image`, so Terraform ignores the image after creation and owns
# everything else: environment, secrets, probes, scaling, identity.

locals {
  # the public services' timeout (150 s) sits above the app's own 120 s request timeout
  # (shared/src/http/timeouts.ts), so a slow 8 MiB upload meets our 408, not a cut connection.
  # public: reached by anyone through the load balancer, so Cloud Run's invoker IAM check is off
  # (invoker_iam_disabled below); the services authenticate every caller themselves.
  service_settings = {
    "edge-ingest"        = { ingress = "INGRESS_TRAFFIC_INTERNAL_LOAD_BALANCER", public = true, concurrency = 80, memory = "1Gi", cpu = "1", timeout = "150s", min = 1 }
    "portal-api"         = { ingress = "INGRESS_TRAFFIC_INTERNAL_LOAD_BALANCER", public = true, concurrency = 80, memory = "1Gi", cpu = "1", timeout = "150s", min = 0 }
    "upsert-worker"      = { ingress = "INGRESS_TRAFFIC_INTERNAL_ONLY", public = false, concurrency = 4, memory = "2Gi", cpu = "2", timeout = "600s", min = 0 }
    "webhook-dispatcher" = { ingress = "INGRESS_TRAFFIC_INTERNAL_ONLY", public = false, concurrency = 80, memory = "512Mi", cpu = "1", timeout = "60s", min = 0 }
  }

  # Liveness: Cloud Run restarts an instance after failure_threshold consecutive probes that got
  # no 200 within timeout_seconds (timeout must stay below period). Measured /healthz latency
  # under saturating load (docs/performance.md, "/healthz under load"; docs/operations.md,
  # "Probes"): p99 0.42-0.65 s with batch work on the main thread, which is how upsert-worker runs
  # on Cloud Run (a push is applied in its request), worst p99 ever measured 1.09 s (lock
  # contention, embedded store only); 0.14-0.48 s p99 for the services that only serve requests.
  # A probe therefore fails only past 5 s (4.6x the worst p99, 7.7x the main-thread p99) and a
  # restart needs 30 s (60 s for upsert-worker, whose 4 concurrent batches may hold the loop for
  # several turns) of consecutive failures, while a hung process is still replaced within a minute.
  liveness = {
    "edge-ingest"        = { timeout = 5, period = 10, failures = 3 }
    "portal-api"         = { timeout = 5, period = 10, failures = 3 }
    "upsert-worker"      = { timeout = 5, period = 10, failures = 6 }
    "webhook-dispatcher" = { timeout = 5, period = 10, failures = 3 }
  }
}

resource "google_cloud_run_v2_service" "service" {
  for_each            = local.service_settings
  name                = each.key
  location            = var.region
  ingress             = each.value.ingress
  deletion_protection = false
  # Public without an IAM member: an `allUsers` run.invoker binding is refused by Domain Restricted
  # Sharing (iam.allowedPolicyMemberDomains, on by default for organizations created since
  # 2024-05-03); turning the invoker check off is Google's recommended way (docs/deploy.md,
  # "Organization policies"). The internal services keep the check: only the push and task
  # identities may call them (iam members below).
  invoker_iam_disabled = each.value.public

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
      # the app listens within a few seconds; 30 s (15 x 2 s) leaves room for a cold image pull
      startup_probe {
        http_get {
          path = "/healthz"
        }
        timeout_seconds   = 1
        period_seconds    = 2
        failure_threshold = 15
      }
      liveness_probe {
        http_get {
          path = "/healthz"
        }
        timeout_seconds   = local.liveness[each.key].timeout
        period_seconds    = local.liveness[each.key].period
        failure_threshold = local.liveness[each.key].failures
      }
    }
  }

  lifecycle {
    # Rolling out (Cloud Build, deploy/roll-out.sh) changes the image, and a restart after a
    # secret rotation a template label (docs/operations.md); gcloud marks each new revision with a
    # nonce label and leaves its name to Cloud Run. Terraform sets none of these, so it must not
    # take them back.
    # template[0].revision is deliberately NOT ignored: a revision name set outside Terraform
    # (`gcloud run services update --revision-suffix`) would then be kept in every later plan and
    # re-sent with the next template change, and Cloud Run refuses a new template under the name
    # of a revision that exists. Not ignored, Terraform plans it back to unset (Cloud Run names
    # the next revision itself), so no apply can collide with an earlier revision.
    ignore_changes = [template[0].containers[0].image, template[0].labels, client, client_version]
  }

  # a revision starts only if every secret it mounts has a version its account may read
  depends_on = [google_secret_manager_secret_version.initial, time_sleep.iam_propagation, google_project_service.enabled]
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
