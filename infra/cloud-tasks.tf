# The default delivery queue. The dispatcher also creates one queue per endpoint at run time
# (ensureQueue, name derived from the integration id) with that endpoint's rate, so one slow
# receiver never holds back the others. Retries are scheduled by the dispatcher itself
# (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, jittered); the queue retries only
# transport failures to reach the dispatcher.
resource "google_cloud_tasks_queue" "deliveries" {
  name     = "deliveries-default"
  location = var.region
  rate_limits {
    max_dispatches_per_second = var.delivery_dispatches_per_second
    max_concurrent_dispatches = 100
  }
  retry_config {
    max_attempts       = 5
    min_backoff        = "5s"
    max_backoff        = "300s"
    max_doublings      = 4
    max_retry_duration = "3600s"
  }
  stackdriver_logging_config {
    sampling_ratio = 0.1
  }
  depends_on = [google_project_service.enabled]
}
