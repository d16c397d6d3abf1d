"""A compact set of ids in insertion order: the speed and memory work of the ledger replay,
kept apart from its rules."""

import hashlib
import os
from array import array


class IdIndex:
    """Ids numbered in insertion order, held in flat arrays: no Python object per id.

    A million ids as a million str keys of a dict cost about 150 MiB, and, interleaved with the
    short-lived objects of parsing, fragment the heap so that the process never gives the
    memory back. Here they cost about 26 bytes each: the UTF-8 bytes in one blob, an end offset,
    and a slot in an open-addressing table of ordinals.

    The table's hash is BLAKE2b keyed with a salt of its own rather than Python's `hash`, which
    changes with every process: a saved index (generator.verifier.memory.ledger_snapshot) is loaded as it
    was, without hashing a million ids again, and the salt, never shown to whoever chose the
    ids, still keeps them from crowding one slot.
    """

    def __init__(self, salt: bytes | None = None) -> None:
        self._salt = os.urandom(16) if salt is None else salt
        self._blob = bytearray()
        self._ends = array("Q")
        self._table = array("i", [-1]) * 1024
        self._mask = 1023

    def _hash(self, key: bytes) -> int:
        return int.from_bytes(hashlib.blake2b(key, digest_size=8, key=self._salt).digest(), "little")

    def __len__(self) -> int:
        return len(self._ends)

    def _slot(self, key: bytes) -> int:
        """The table slot holding `key`, or the empty slot where it would go."""
        table, ends, blob, mask = self._table, self._ends, self._blob, self._mask
        h = self._hash(key) & mask
        while True:
            o = table[h]
            if o < 0 or blob[(ends[o - 1] if o else 0) : ends[o]] == key:
                return h
            h = (h + 1) & mask

    def get(self, key: str) -> int | None:
        o = self._table[self._slot(key.encode())]
        return None if o < 0 else o

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def add(self, key: str) -> int:
        """Number a new key (the caller has checked it is not there)."""
        raw = key.encode()
        o = len(self._ends)
        self._blob += raw
        self._ends.append(len(self._blob))
        self._table[self._slot(raw)] = o
        if 2 * len(self._ends) > len(self._table):
            self._grow()
        return o

    def key(self, o: int) -> str:
        return self._blob[(self._ends[o - 1] if o else 0) : self._ends[o]].decode()

    def _grow(self) -> None:
        self._table = array("i", [-1]) * (2 * len(self._table))
        self._mask = len(self._table) - 1
        start = 0
        for o, end in enumerate(self._ends):
            self._table[self._slot(bytes(self._blob[start:end]))] = o
            start = end

    def parts(self) -> "tuple[bytes, bytearray, array[int], array[int]]":
        """What a snapshot saves: the salt, the blob, the ends and the table."""
        return self._salt, self._blob, self._ends, self._table

    @classmethod
    def from_parts(cls, salt: bytes, blob: bytearray, ends: "array[int]", table: "array[int]") -> "IdIndex":
        """An index from `parts()`; the caller has checked their sizes agree (a power-of-two
        table more than twice as long as the ends, ends never past the blob)."""
        index = cls(salt)
        index._blob, index._ends, index._table, index._mask = blob, ends, table, len(table) - 1
        return index
