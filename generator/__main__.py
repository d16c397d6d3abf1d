"""`python -m generator` runs the `transparency` command."""

from generator.cli import main

main()
