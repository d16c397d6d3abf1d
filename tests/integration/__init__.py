"""Integration tests: the real commands on programs built in temporary folders, each folder named
for what it drives: commands/ (each command and its refusals), builds/ (the build as a whole), site/ (the built
pages, feeds and schemas), format/ (each feature of the format end to end: the command that writes it, the page
that shows it, the verifier that checks it), verifier/ (verify.py as an auditor runs it), witness/, monitor/
and importers/ (the programs outside the generator)."""
