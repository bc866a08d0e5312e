"""The command line as a person runs it."""
