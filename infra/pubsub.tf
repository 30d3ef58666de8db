# Topics, push subscriptions (OIDC-authenticated) and dead letters.
#   contact-batches -> upsert-worker  /pubsub/contact-batches
#   visit-events    -> webhook-dispatcher /pubsub/visit-events
#   contact-changes -> BigQuery (bigquery.tf)
# Every subscription has a retry policy and a dead-letter topic; every dead-letter topic has its
# own pull subscription so dead letters can be inspected and replayed (docs/operations.md), and a
# push subscription to the webhook-dispatcher that reports each one to the operator.

locals {
  push_topics = {
    "contact-batches" = { service = "upsert-worker", path = "/pubsub/contact-batches", ack_deadline = 600 }
    "visit-events"    = { service = "webhook-dispatcher", path = "/pubsub/visit-events", ack_deadline = 60 }
  }
  all_topics = ["contact-batches", "visit-events", "contact-changes"]
}

resource "google_pubsub_topic" "main" {
  for_each                   = toset(local.all_topics)
  name                       = each.value
  message_retention_duration = "604800s"
  depends_on                 = [google_project_service.enabled]
}

resource "google_pubsub_topic" "dead_letter" {
  for_each   = toset(local.all_topics)
  name       = "${each.value}-dead-letter"
  depends_on = [google_project_service.enabled]
}

resource "google_pubsub_subscription" "dead_letter" {
  for_each                   = toset(local.all_topics)
  name                       = "${each.value}-dead-letter-sub"
  topic                      = google_pubsub_topic.dead_letter[each.value].id
  ack_deadline_seconds       = 60
  message_retention_duration = "604800s"
  expiration_policy {
    ttl = ""
  }
  retry_policy {
    minimum_backoff = "10s"
    maximum_backoff = "600s"
  }
}

# The dead letters' second subscription: every dead letter is pushed to the webhook-dispatcher,
# which tells the operator once (`batch.dead_lettered`, docs/operations.md "Operational events")
# and acks; `<topic>-dead-letter-sub` above keeps its own copy for inspection and replay (a topic
# gives every subscription every message). No dead_letter_policy, by choice: its only possible
# target is this same dead-letter topic, where a report that keeps failing would come back as a
# new dead letter, again and again; it is retried (backoff up to 600 s) until the 7-day retention
# instead, and a backlog here is in the push backlog alert (monitoring.tf).
resource "google_pubsub_subscription" "dead_letter_alerts" {
  for_each                   = toset(local.all_topics)
  name                       = "${each.value}-dead-letter-alerts"
  topic                      = google_pubsub_topic.dead_letter[each.value].id
  ack_deadline_seconds       = 60
  message_retention_duration = "604800s"
  expiration_policy {
    ttl = ""
  }
  push_config {
    # the path the code serves (shared/src/model/topics.ts deadLetterPushPath)
    push_endpoint = "${local.service_url["webhook-dispatcher"]}/pubsub/${each.value}-dead-letter"
    oidc_token {
      service_account_email = google_service_account.pubsub_push.email
      audience              = local.service_url["webhook-dispatcher"]
    }
  }
  retry_policy {
    minimum_backoff = "10s"
    maximum_backoff = "600s"
  }
}

resource "google_pubsub_subscription" "push" {
  for_each             = local.push_topics
  name                 = "${each.key}-push"
  topic                = google_pubsub_topic.main[each.key].id
  ack_deadline_seconds = each.value.ack_deadline
  expiration_policy {
    ttl = ""
  }
  push_config {
    push_endpoint = "${local.service_url[each.value.service]}${each.value.path}"
    # Pub/Sub wraps each message ({message: {data, attributes, messageId, …}, subscription}),
    # which is what decodePushEnvelope reads: never set no_wrapper here.
    oidc_token {
      # the services accept exactly this identity (PUSH_SERVICE_ACCOUNT) and audience (PUSH_AUDIENCE)
      service_account_email = google_service_account.pubsub_push.email
      audience              = local.service_url[each.value.service]
    }
  }
  retry_policy {
    minimum_backoff = "10s"
    maximum_backoff = "600s"
  }
  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.dead_letter[each.key].id
    max_delivery_attempts = 10
  }
  depends_on = [google_pubsub_topic_iam_member.dead_letter_publisher]
}

# The Pub/Sub service agent forwards to dead-letter topics and acks the source subscription.
resource "google_pubsub_topic_iam_member" "dead_letter_publisher" {
  for_each   = toset(local.all_topics)
  topic      = google_pubsub_topic.dead_letter[each.value].id
  role       = "roles/pubsub.publisher"
  member     = "serviceAccount:${local.pubsub_agent}"
  depends_on = [google_project_service_identity.pubsub]
}

resource "google_pubsub_subscription_iam_member" "dead_letter_subscriber" {
  for_each     = local.push_topics
  subscription = google_pubsub_subscription.push[each.key].id
  role         = "roles/pubsub.subscriber"
  member       = "serviceAccount:${local.pubsub_agent}"
  depends_on   = [google_project_service_identity.pubsub]
}

# Producers: edge-ingest and portal-api publish batches (portal: origin fallbacks); portal-api
# publishes visit events (management API). Contact changes come from every writer of the contact
# store (the contact-write seam's change feed): upsert-worker (pushes), webhook-dispatcher (visits
# that create or enrich a person), and portal-api when an origin fallback upserts synchronously.
resource "google_pubsub_topic_iam_member" "publishers" {
  for_each = {
    "contact-batches/edge-ingest" = { topic = "contact-batches", sa = "edge-ingest" }
    "contact-batches/portal-api"  = { topic = "contact-batches", sa = "portal-api" }
    "visit-events/portal-api"     = { topic = "visit-events", sa = "portal-api" }
    "contact-changes/upsert"      = { topic = "contact-changes", sa = "upsert-worker" }
    "contact-changes/portal-api"  = { topic = "contact-changes", sa = "portal-api" }
    "contact-changes/dispatcher"  = { topic = "contact-changes", sa = "webhook-dispatcher" }
  }
  topic  = google_pubsub_topic.main[each.value.topic].id
  role   = "roles/pubsub.publisher"
  member = "serviceAccount:${local.sa[each.value.sa]}"
}

# Workers dead-letter records they can never store (application-level dead letters).
resource "google_pubsub_topic_iam_member" "worker_dead_letter_publisher" {
  for_each = { "contact-batches" = "upsert-worker", "visit-events" = "webhook-dispatcher" }
  topic    = google_pubsub_topic.dead_letter[each.key].id
  role     = "roles/pubsub.publisher"
  member   = "serviceAccount:${local.sa[each.value]}"
}
