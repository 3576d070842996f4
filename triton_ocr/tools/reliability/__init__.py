"""Reliability tooling: the payloads users upload, the soak run and the fault drills."""
