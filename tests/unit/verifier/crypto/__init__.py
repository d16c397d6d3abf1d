"""generator/verifier/crypto/: its signature schemes checked on their own, against published vectors and
independent implementations, without a site."""
