# Log-based metrics (docs/operations.md, "Metrics"): each counts or measures a structured log line
# the services already write in Cloud Logging's shape. test/infra/monitoring.test.ts checks that
# every jsonPayload field named here is one the code writes.
locals {
  # Cloud Run writes each service's stdout lines under this resource type
  run_logs = "resource.type=\"cloud_run_revision\""
}

# Records of the batches the worker applied, by outcome: accepted, or refused for a reason
# (no_external_id, too_large, store_failed). One line per outcome per batch carries the count, so
# the metric is a distribution of `records` and the dashboard sums it.
resource "google_logging_metric" "contact_records" {
  name            = "contact_records"
  description     = "Contact records the upsert worker accepted or refused, by outcome (services/upsert-worker/src/handle-batch.ts)"
  filter          = "${local.run_logs} AND jsonPayload.event=\"contact_records\""
  value_extractor = "EXTRACT(jsonPayload.records)"
  label_extractors = {
    outcome = "EXTRACT(jsonPayload.outcome)"
  }
  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "DISTRIBUTION"
    unit         = "1"
    display_name = "Contact records by outcome"
    labels {
      key         = "outcome"
      value_type  = "STRING"
      description = "accepted, no_external_id, too_large or store_failed"
    }
  }
  # a batch holds at most 10,000 records: 1, 2, 4 … 16,384
  bucket_options {
    exponential_buckets {
      num_finite_buckets = 15
      growth_factor      = 2
      scale              = 1
    }
  }
  depends_on = [google_project_service.enabled]
}

# Pushes the edge refused, by HTTP status (400 invalid, 401/403 credential, 404 unknown tenant
# or source, 413 too large, 429 rate limited; docs/ingestion.md): their records never reached a
# batch. Read from edge-ingest's own request lines (shared/src/http/request-log.ts), whose
# httpRequest object Cloud Logging lifts into the entry's httpRequest.
resource "google_logging_metric" "pushes_refused" {
  name        = "pushes_refused"
  description = "Requests edge-ingest answered with a 4xx, by status (shared/src/http/request-log.ts)"
  filter      = "${local.run_logs} AND jsonPayload.service=\"edge-ingest\" AND httpRequest.status>=400 AND httpRequest.status<500"
  label_extractors = {
    status = "EXTRACT(httpRequest.status)"
  }
  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    display_name = "Pushes refused by status"
    labels {
      key         = "status"
      value_type  = "STRING"
      description = "the HTTP status of the answer"
    }
  }
  depends_on = [google_project_service.enabled]
}

# Push-to-visible lag: from the edge's 202 (the batch's received_at) to its records stored and
# change rows published, retries included. The bounds include the SLO's 60 s (slos.tf), so the
# SLO counts exactly.
resource "google_logging_metric" "contact_apply_lag" {
  name            = "contact_apply_lag"
  description     = "Milliseconds from a push's 202 to its batch applied (services/upsert-worker/src/handle-batch.ts, event contact_batch)"
  filter          = "${local.run_logs} AND jsonPayload.event=\"contact_batch\""
  value_extractor = "EXTRACT(jsonPayload.lagMs)"
  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "DISTRIBUTION"
    unit         = "ms"
    display_name = "Push-to-applied lag"
  }
  bucket_options {
    explicit_buckets {
      bounds = [100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000, 21600000, 86400000]
    }
  }
  depends_on = [google_project_service.enabled]
}

# Webhook delivery attempts by outcome: succeeded, retrying, failed (given up), disabled (410).
resource "google_logging_metric" "webhook_delivery_attempts" {
  name        = "webhook_delivery_attempts"
  description = "Webhook delivery attempts by outcome (shared/src/domain/webhooks/deliver.ts, event webhook_delivery)"
  filter      = "${local.run_logs} AND jsonPayload.event=\"webhook_delivery\""
  label_extractors = {
    outcome = "EXTRACT(jsonPayload.outcome)"
  }
  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    display_name = "Webhook delivery attempts by outcome"
    labels {
      key         = "outcome"
      value_type  = "STRING"
      description = "succeeded, retrying, failed or disabled"
    }
  }
  depends_on = [google_project_service.enabled]
}

# How long receivers took to answer (attempts that reached the network; latencyMs 0 means none left).
resource "google_logging_metric" "webhook_delivery_latency" {
  name            = "webhook_delivery_latency"
  description     = "Milliseconds a webhook receiver took to answer, by outcome (shared/src/domain/webhooks/deliver.ts)"
  filter          = "${local.run_logs} AND jsonPayload.event=\"webhook_delivery\" AND jsonPayload.latencyMs>0"
  value_extractor = "EXTRACT(jsonPayload.latencyMs)"
  label_extractors = {
    outcome = "EXTRACT(jsonPayload.outcome)"
  }
  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "DISTRIBUTION"
    unit         = "ms"
    display_name = "Webhook delivery latency"
    labels {
      key         = "outcome"
      value_type  = "STRING"
      description = "succeeded, retrying, failed or disabled"
    }
  }
  # 10 ms … ~82 s: the sender's own timeout lies inside
  bucket_options {
    exponential_buckets {
      num_finite_buckets = 14
      growth_factor      = 2
      scale              = 10
    }
  }
  depends_on = [google_project_service.enabled]
}

# Endpoints the dispatcher disabled because they answered 410.
resource "google_logging_metric" "webhook_endpoints_disabled" {
  name        = "webhook_endpoints_disabled"
  description = "Webhook integrations disabled by a 410 (shared/src/domain/webhooks/deliver.ts, outcome disabled)"
  filter      = "${local.run_logs} AND jsonPayload.event=\"webhook_delivery\" AND jsonPayload.outcome=\"disabled\""
  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    display_name = "Webhook endpoints disabled"
  }
  depends_on = [google_project_service.enabled]
}

# Messages and records the worker parked on contact-batches-dead-letter itself. What Pub/Sub
# dead-letters after its delivery attempts is Pub/Sub's own metric
# (subscription/dead_letter_message_count, on the dashboard next to this one).
resource "google_logging_metric" "dead_lettered" {
  name        = "dead_lettered"
  description = "Batch messages (kind message) and records (kind records) the upsert worker dead-lettered (services/upsert-worker/src/handle-batch.ts)"
  filter      = "${local.run_logs} AND jsonPayload.event=\"dead_lettered\""
  label_extractors = {
    kind = "EXTRACT(jsonPayload.kind)"
  }
  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    display_name = "Dead-lettered by the worker"
    labels {
      key         = "kind"
      value_type  = "STRING"
      description = "message (unreadable) or records (could never be stored)"
    }
  }
  depends_on = [google_project_service.enabled]
}
