"""Broker/'s shared modules: the wire's codec, discovery files, uploads."""
