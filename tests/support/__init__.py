"""What the tests share: helpers a test module imports, where conftest.py holds the fixtures.

A test module takes its helpers from here, never from another test module (tests/structure/test_structure.py
fails when one does), so that moving, renaming or trimming a test module breaks no other. A module here is named
for what it helps with: `demo` (the repository's demo data and the bundled verify.py), `programs` (small
programs made through the real commands), `files` (snapshots of trees and refused commands), `runs`
(registering and certifying runs), `tamper` (a site altered and re-signed as a key holder could), `forgery`
(certificates forged or written by hand), and so on.
"""
