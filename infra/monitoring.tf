# Alerts (docs/operations.md explains each): dead letters waiting, push backlog age, 5xx rate.

resource "google_monitoring_notification_channel" "email" {
  count        = var.alert_email == "" ? 0 : 1
  display_name = "Platform alerts"
  type         = "email"
  labels = {
    email_address = var.alert_email
  }
  depends_on = [google_project_service.enabled]
}

locals {
  channels = [for c in google_monitoring_notification_channel.email : c.id]
  # every subscription that consumes a main topic (push and BigQuery); the dead-letter
  # subscriptions have their own alert below. The names come from the resources, so a new
  # subscription is either listed here or caught by test/infra/terraform.test.ts.
  consuming_subscriptions = concat(
    [for s in google_pubsub_subscription.push : s.name],
    # dead letters not yet reported to the operator (batch.dead_lettered)
    [for s in google_pubsub_subscription.dead_letter_alerts : s.name],
    [google_pubsub_subscription.contact_changes_bigquery.name],
  )
}

resource "google_monitoring_alert_policy" "dead_letters" {
  display_name = "Dead letters waiting"
  combiner     = "OR"
  conditions {
    display_name = "undelivered dead letters > 0"
    condition_threshold {
      filter          = "resource.type = \"pubsub_subscription\" AND metric.type = \"pubsub.googleapis.com/subscription/num_undelivered_messages\" AND resource.label.subscription_id = monitoring.regex.full_match(\".*-dead-letter-sub\")"
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "300s"
      aggregations {
        alignment_period   = "60s"
        per_series_aligner = "ALIGN_MAX"
      }
    }
  }
  notification_channels = local.channels
  depends_on            = [google_project_service.enabled]
}

resource "google_monitoring_alert_policy" "push_backlog" {
  display_name = "Subscription backlog older than 10 minutes"
  combiner     = "OR"
  conditions {
    display_name = "oldest unacked message age > 600 s"
    condition_threshold {
      filter          = "resource.type = \"pubsub_subscription\" AND metric.type = \"pubsub.googleapis.com/subscription/oldest_unacked_message_age\" AND resource.label.subscription_id = monitoring.regex.full_match(\"${join("|", local.consuming_subscriptions)}\")"
      comparison      = "COMPARISON_GT"
      threshold_value = 600
      duration        = "300s"
      aggregations {
        alignment_period   = "60s"
        per_series_aligner = "ALIGN_MAX"
      }
    }
  }
  notification_channels = local.channels
  depends_on            = [google_project_service.enabled]
}

resource "google_monitoring_alert_policy" "server_errors" {
  display_name = "Cloud Run 5xx responses"
  combiner     = "OR"
  conditions {
    display_name = "5xx rate > 1/s for 5 minutes"
    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND metric.type = \"run.googleapis.com/request_count\" AND metric.label.response_code_class = \"5xx\""
      comparison      = "COMPARISON_GT"
      threshold_value = 1
      duration        = "300s"
      aggregations {
        alignment_period     = "60s"
        per_series_aligner   = "ALIGN_RATE"
        cross_series_reducer = "REDUCE_SUM"
        group_by_fields      = ["resource.label.service_name"]
      }
    }
  }
  notification_channels = local.channels
  depends_on            = [google_project_service.enabled]
}
