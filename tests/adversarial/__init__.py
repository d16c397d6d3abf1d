"""Adversarial tests: a site tampered with and re-signed by a key holder, hostile sites and
histories, a fuzz corpus, look-alike origins, and leak searches for secrets that must never be published."""
