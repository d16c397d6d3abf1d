"""transparency results from-inspect, on Inspect logs made with Inspect's own mock model."""
