"""transparency mirror following a published log: what it stores, and when it cosigns."""
