terraform {
  # write-only arguments (secret_data_wo) need Terraform 1.11; ephemeral resources 1.10
  required_version = ">= 1.11"
  required_providers {
    # 7.14.1 is the version infra/.terraform.lock.hcl records (docs/deploy.md: "Provider lock")
    google = {
      source  = "hashicorp/google"
      version = ">= 7.14.1, < 8.0.0"
    }
    # google_project_service_identity (the Pub/Sub service agent) exists only in google-beta
    google-beta = {
      source  = "hashicorp/google-beta"
      version = ">= 7.14.1, < 8.0.0"
    }
    # ephemeral "random_bytes" arrived in 3.9.0
    random = {
      source  = "hashicorp/random"
      version = ">= 3.9.0, < 4.0.0"
    }
    # time_sleep: waits for IAM grants to propagate before resources that check them
    time = {
      source  = "hashicorp/time"
      version = ">= 0.13.1, < 1.0.0"
    }
  }
  # State lives in a GCS bucket created before the first apply (docs/deploy.md, step 2):
  #   terraform init -backend-config=bucket=$STATE_BUCKET -backend-config=prefix=lsv
  backend "gcs" {}
}

provider "google" {
  project = var.project_id
  region  = var.region
}

provider "google-beta" {
  project = var.project_id
  region  = var.region
}
