-- The AWS IAM role an integration auth assumes, sealed with the project data key
-- like its other credentials.
ALTER TABLE integration_auths ADD COLUMN encrypted_aws_assume_iam_role_arn bytea;
