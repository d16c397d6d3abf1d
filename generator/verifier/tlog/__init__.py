"""Transparency-log concepts: Merkle trees and proofs, C2SP tlog-proof, tiles, cosignatures, trust policies and
witnessed checkpoints, and the program's keys over the log's history (key ring, rotation). A tlog module imports
core and tlog only.
"""
