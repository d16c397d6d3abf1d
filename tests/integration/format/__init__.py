"""Each feature of the format end to end: the command that writes it, the page that shows it and
the verifier that checks it."""
