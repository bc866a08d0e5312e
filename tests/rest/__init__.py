"""The REST door."""
