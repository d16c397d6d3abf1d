"""Witnesses and trust policies through the real commands."""
