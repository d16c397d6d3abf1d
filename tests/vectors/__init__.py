"""Published test vectors (the JSON files beside these tests) for Ed25519, RFC 6962 Merkle trees, RFC 8785,
signed notes, RFC 9380 hashing to BLS12-381 and real drand quicknet rounds, Project Wycheproof's RSA and
ECDSA signatures, and other implementations' C2SP tlog-cosignature messages and cosignatures."""
