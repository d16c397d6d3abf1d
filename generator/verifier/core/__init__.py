"""The verifier's foundations: keeping the site's code out (`isolation`, the bundle's prelude), safe text, the
exception tree, canonical JSON, field formats, Unicode confusables, Ed25519 and key formats, signed notes, compact
id sets, the report and the site's folder (the only code that reads files). A core module imports only other core
modules, the standard library and PyNaCl.
"""
