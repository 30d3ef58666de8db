output "load_balancer_ip" {
  description = "Address the DNS records below point to."
  value       = google_compute_global_address.lb.address
}

output "edge_base_url_template" {
  description = "Edge host of a tenant: replace {public_id}."
  value       = "https://{public_id}.${var.edge_domain}"
}

output "portal_base_url" {
  description = "Portal origin (portal-api)."
  value       = local.portal_base_url
}

output "service_urls" {
  description = "Cloud Run URLs of the four services (the internal ones accept only their push identities)."
  value       = { for k, s in google_cloud_run_v2_service.service : k => s.uri }
}

output "dns_records" {
  description = "DNS records to create at the DNS provider: the wildcard and portal A records, and the CNAMEs that authorize the certificates."
  value = concat(
    [
      { name = "*.${var.edge_domain}.", type = "A", data = google_compute_global_address.lb.address },
      { name = "${var.portal_domain}.", type = "A", data = google_compute_global_address.lb.address },
    ],
    [
      for a in [google_certificate_manager_dns_authorization.edge, google_certificate_manager_dns_authorization.portal] :
      { name = a.dns_resource_record[0].name, type = a.dns_resource_record[0].type, data = a.dns_resource_record[0].data }
    ],
  )
}

output "artifact_registry" {
  description = "Where Cloud Build pushes the images (_REGION and _REPOSITORY substitutions)."
  value       = "${var.region}-docker.pkg.dev/${var.project_id}/${google_artifact_registry_repository.images.repository_id}"
}

output "operator_token_secret" {
  description = "Secret Manager secret holding the operator token (read it with gcloud secrets versions access latest --secret=operator-token)."
  value       = google_secret_manager_secret.platform["operator-token"].secret_id
}

output "cloud_build_submit" {
  description = "The command that tests, builds and rolls out the four images with Cloud Build, as the cloud-build account (run it from the repository root)."
  value = join(" ", [
    "gcloud builds submit --config cloudbuild.yaml",
    "--project=${var.project_id}",
    "--service-account=${google_service_account.cloud_build.id}",
    "--gcs-source-staging-dir=gs://${google_storage_bucket.build_source.name}/source",
    "--substitutions=_REGION=${var.region},_REPOSITORY=${google_artifact_registry_repository.images.repository_id}",
  ])
}
