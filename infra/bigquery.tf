# Analysts find contacts in BigQuery: upsert-worker publishes one row per changed contact to
# `contact-changes`; a BigQuery subscription writes them to `contact_changes` (schema file
# shared with the export command: infra/bigquery/contact_changes.schema.json); the view
# `contacts_latest` keeps the newest row per contact.

resource "google_bigquery_dataset" "contacts" {
  dataset_id                 = "lsv_contacts"
  location                   = var.bigquery_location
  description                = "Contact changes from the platform (one row per change) and the latest state per contact"
  delete_contents_on_destroy = false
  depends_on                 = [google_project_service.enabled]
}

resource "google_bigquery_table" "contact_changes" {
  dataset_id          = google_bigquery_dataset.contacts.dataset_id
  table_id            = "contact_changes"
  schema              = file("${path.module}/bigquery/contact_changes.schema.json")
  deletion_protection = true
  time_partitioning {
    type  = "DAY"
    field = "changed_at"
  }
  clustering = ["account_id", "contact_id"]
}

resource "google_bigquery_table" "contacts_latest" {
  dataset_id          = google_bigquery_dataset.contacts.dataset_id
  table_id            = "contacts_latest"
  deletion_protection = false
  view {
    use_legacy_sql = false
    query          = <<-SQL
      SELECT * EXCEPT (row_rank)
      FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY account_id, contact_id ORDER BY changed_at DESC) AS row_rank
        FROM `${var.project_id}.${google_bigquery_dataset.contacts.dataset_id}.${google_bigquery_table.contact_changes.table_id}`
      )
      WHERE row_rank = 1
    SQL
  }
}

# The Pub/Sub service agent writes into the dataset.
resource "google_bigquery_dataset_iam_member" "pubsub_writer" {
  dataset_id = google_bigquery_dataset.contacts.dataset_id
  role       = "roles/bigquery.dataEditor"
  member     = "serviceAccount:${local.pubsub_agent}"
  depends_on = [google_project_service_identity.pubsub]
}

# use_table_schema: each message is one JSON change row (shared/src/domain/contacts/change-row.ts)
# whose fields are the table's columns; TIMESTAMP columns are integer microseconds since the
# epoch (the Storage Write API's TIMESTAMP input, which the subscription writes through). The
# documented rules and what was checked are in docs/deploy.md ("BigQuery: how rows get in").
resource "google_pubsub_subscription" "contact_changes_bigquery" {
  name  = "contact-changes-bigquery"
  topic = google_pubsub_topic.main["contact-changes"].id
  bigquery_config {
    table               = "${var.project_id}.${google_bigquery_dataset.contacts.dataset_id}.${google_bigquery_table.contact_changes.table_id}"
    use_table_schema    = true
    drop_unknown_fields = true
  }
  expiration_policy {
    ttl = ""
  }
  retry_policy {
    minimum_backoff = "10s"
    maximum_backoff = "600s"
  }
  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.dead_letter["contact-changes"].id
    max_delivery_attempts = 10
  }
  # creating it checks that the Pub/Sub agent can write the table: wait for the grant to apply
  depends_on = [google_bigquery_dataset_iam_member.pubsub_writer, google_pubsub_topic_iam_member.dead_letter_publisher, time_sleep.iam_propagation]
}

resource "google_pubsub_subscription_iam_member" "bigquery_dead_letter_subscriber" {
  subscription = google_pubsub_subscription.contact_changes_bigquery.id
  role         = "roles/pubsub.subscriber"
  member       = "serviceAccount:${local.pubsub_agent}"
  depends_on   = [google_project_service_identity.pubsub]
}
