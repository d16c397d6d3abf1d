"""Published test vectors (the JSON files beside these tests) for Ed25519, RFC 6962 Merkle trees, RFC 8785
and signed notes."""
