# The shared delivery queues past TASK_QUEUE_DEDICATED_LIMIT endpoints (issue 23; docs/capacity.md,
# "Past 1,000 endpoints"). Endpoint queues are created at run time, one per endpoint, until the
# limit; the endpoints after it share these, chosen by a hash of the endpoint id
# (shared/src/domain/webhooks/queue-pool.ts, which names them the same way). They are created here,
# before any service runs, so the pool has its queues even when endpoint queues (or other queues
# of the project) have used the 1,000-queue quota up. The dispatcher holds each pooled endpoint to
# its own rate, so a pool queue runs at Cloud Tasks' maximum. Creating tasks on them needs no
# grant of its own: lsvDeliveryQueues (service-accounts.tf) is granted on the project.
locals {
  task_queue_pool = toset([for i in range(var.task_queue_pool_size) : format("webhook-pool-%02d", i)])
}

resource "google_cloud_tasks_queue" "delivery_pool" {
  for_each = local.task_queue_pool
  name     = each.key
  location = var.region

  rate_limits {
    max_dispatches_per_second = 500
    max_concurrent_dispatches = 1000
  }

  # the dispatcher-outage plan of every delivery queue (QUEUE_RETRY_CONFIG in
  # shared/src/adapters/google/cloud-tasks-scheduler.ts, which also applies it at run time)
  retry_config {
    max_attempts       = 100
    min_backoff        = "1s"
    max_backoff        = "300s"
    max_doublings      = 8
    max_retry_duration = "86400s"
  }

  lifecycle {
    # a deleted queue's name cannot be used again for 7 days, and its tasks are lost: shrinking
    # var.task_queue_pool_size must not delete queues endpoints are recorded on
    prevent_destroy = true
  }

  depends_on = [google_project_service.enabled]
}
