"""The documents checked against the code: every citation resolves, README is a landing page, the figures it
states hold, and the tutorial runs."""
