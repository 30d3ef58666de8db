# IAM grants take effect within seconds to a few minutes. Two kinds of resource check their
# permissions when they are created, so on an empty project they would fail if created right
# after the grant: a Cloud Run revision (its account must read its secrets) and the BigQuery
# subscription (the Pub/Sub agent must be able to write the table). They wait for this.
resource "time_sleep" "iam_propagation" {
  create_duration = "90s"
  depends_on = [
    google_secret_manager_secret_iam_member.reader,
    google_project_iam_member.datastore_user,
    google_bigquery_dataset_iam_member.pubsub_writer,
    google_pubsub_topic_iam_member.dead_letter_publisher,
    google_service_account_iam_member.pubsub_token_creator,
  ]
}
