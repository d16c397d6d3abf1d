"""generator/site/: rendering pages."""
