"""The extension's files without a browser: the bridge on WebMCP's shapes, the wire's names, icons."""
