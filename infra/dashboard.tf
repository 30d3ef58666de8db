# The platform's dashboard: the log-based metrics of log-metrics.tf and Pub/Sub's dead letters
# (docs/operations.md, "Metrics"). The JSON names the metrics by type, which Terraform cannot
# see: depends_on orders the dashboard after them.
resource "google_monitoring_dashboard" "platform" {
  dashboard_json = file("${path.module}/dashboards/platform.json")
  depends_on = [
    google_project_service.enabled,
    google_logging_metric.contact_records,
    google_logging_metric.pushes_refused,
    google_logging_metric.contact_apply_lag,
    google_logging_metric.webhook_delivery_attempts,
    google_logging_metric.webhook_delivery_latency,
    google_logging_metric.webhook_endpoints_disabled,
    google_logging_metric.dead_lettered,
  ]
}
