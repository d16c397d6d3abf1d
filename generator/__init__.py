"""Static transparency site generator for an AI-evaluation program (public formats v1).

The package reads a program's data directory, validates it, and renders a signed static site
whose every artifact the standalone `verify.py` (this package's `generator/verify.py`) can
recheck offline.
"""

__version__ = "0.3.0"
