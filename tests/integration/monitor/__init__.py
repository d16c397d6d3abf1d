"""transparency monitor following a published log."""
