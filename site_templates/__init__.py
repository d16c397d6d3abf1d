"""The Jinja2 templates and the stylesheet of the published site (package data)."""
