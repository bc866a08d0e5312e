"""The benchmark's own logic."""
