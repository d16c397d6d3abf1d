"""transparency publish: a built site sent to a folder and to a real S3 store (SeaweedFS), with
readers polling while publishes are killed."""
