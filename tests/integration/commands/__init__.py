"""Each command as an operator types it, and every way it must refuse."""
