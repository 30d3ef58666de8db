# Service-level objectives over the log-based metrics (log-metrics.tf) and their burn-rate alerts
# (docs/operations.md, "Alerts"). Both SLOs are request-based: every batch and every finished
# delivery counts once, so a quiet hour weighs less than a busy one.

resource "google_monitoring_custom_service" "platform" {
  service_id   = "lsv-platform"
  display_name = "Contact ingestion and webhook delivery"
  depends_on   = [google_project_service.enabled]
}

# Cloud Monitoring can take minutes before a log-based metric created in the same apply can be
# used in an SLO's filter (docs/deploy.md, "Why one apply converges"): the SLOs wait for this.
# `triggers` re-create the wait (and so wait again) when the set of metrics the SLOs read changes.
resource "time_sleep" "log_metrics_usable" {
  create_duration = "180s"
  triggers = {
    metrics = join(",", [google_logging_metric.contact_apply_lag.name, google_logging_metric.webhook_delivery_attempts.name])
  }
  depends_on = [google_logging_metric.contact_apply_lag, google_logging_metric.webhook_delivery_attempts]
}

# Push-to-visible: 99 % of batches applied (stored, change rows published) within 60 s of the
# edge's 202. 60 s is a bucket bound of contact_apply_lag, so the cut is exact.
resource "google_monitoring_slo" "push_to_visible" {
  service             = google_monitoring_custom_service.platform.service_id
  slo_id              = "push-to-visible"
  display_name        = "99% of pushed batches applied within 60 s"
  goal                = 0.99
  rolling_period_days = 30
  depends_on          = [time_sleep.log_metrics_usable]
  request_based_sli {
    distribution_cut {
      distribution_filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.contact_apply_lag.name}\" ${local.run_logs}"
      range {
        max = 60000
      }
    }
  }
}

# Delivery success: 99 % of deliveries that finished did so with a 200 (outcome succeeded) rather
# than giving up (outcome failed: 8 attempts over ~28 h, or the integration inactive). Attempts
# still retrying and endpoints disabled by a 410 (the receiver's own decision) are not counted.
resource "google_monitoring_slo" "delivery_success" {
  service             = google_monitoring_custom_service.platform.service_id
  slo_id              = "delivery-success"
  display_name        = "99% of webhook deliveries succeed"
  goal                = 0.99
  rolling_period_days = 30
  depends_on          = [time_sleep.log_metrics_usable]
  request_based_sli {
    good_total_ratio {
      good_service_filter = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.webhook_delivery_attempts.name}\" ${local.run_logs} metric.label.outcome=\"succeeded\""
      bad_service_filter  = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.webhook_delivery_attempts.name}\" ${local.run_logs} metric.label.outcome=\"failed\""
    }
  }
}

locals {
  # Multiwindow burn-rate alerts for a 30-day budget (Google SRE workbook, "Alerting on SLOs"):
  # fast = 2 % of the budget gone in an hour, slow = 5 % in six hours. The short window (1/12 of
  # the long one) must agree, so an alert clears soon after the burning stops.
  burn_rates = {
    fast = { long = "60m", short = "5m", threshold = 14.4, severity = "CRITICAL" }
    slow = { long = "360m", short = "30m", threshold = 6, severity = "WARNING" }
  }
  slos = {
    push_to_visible  = google_monitoring_slo.push_to_visible
    delivery_success = google_monitoring_slo.delivery_success
  }
  slo_burn_alerts = merge([
    for slo_key, slo in local.slos : {
      for speed, rate in local.burn_rates : "${slo_key}_${speed}" => merge(rate, { speed = speed, slo = slo.name, slo_display = slo.display_name })
    }
  ]...)
}

resource "google_monitoring_alert_policy" "slo_burn" {
  for_each     = local.slo_burn_alerts
  display_name = "SLO ${each.value.speed} burn: ${each.value.slo_display}"
  combiner     = "AND"
  severity     = each.value.severity
  conditions {
    display_name = "burn rate over ${each.value.long} > ${each.value.threshold}"
    condition_threshold {
      filter          = "select_slo_burn_rate(\"${each.value.slo}\", \"${each.value.long}\")"
      comparison      = "COMPARISON_GT"
      threshold_value = each.value.threshold
      duration        = "0s"
    }
  }
  conditions {
    display_name = "burn rate over ${each.value.short} > ${each.value.threshold}"
    condition_threshold {
      filter          = "select_slo_burn_rate(\"${each.value.slo}\", \"${each.value.short}\")"
      comparison      = "COMPARISON_GT"
      threshold_value = each.value.threshold
      duration        = "0s"
    }
  }
  documentation {
    content   = "Where to look and what to do: docs/operations.md, \"Alerts\" (${each.key})."
    mime_type = "text/markdown"
  }
  notification_channels = local.channels
  depends_on            = [google_project_service.enabled]
}
