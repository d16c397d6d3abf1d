"""A certificate rendered in the formats other people's tools read (an Every Eval Ever record, a
verifiable credential, a SCITT transparent statement): made by the build and remade by the verifier
from the published documents alone, so that each export is checked against the certificate it renders."""
