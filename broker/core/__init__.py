"""The broker's rules, free of I/O: who owns which tab, which call is in flight and when it
expires, what each message means, which error a client sees, how page tools are named, who may
talk to the broker, and what the stdio relay sends where while its broker comes and goes.

Adapters (the daemon's ``Hub``, the MCP, REST and link doors, the stdio relay) feed this package
events and carry out the effects it returns; nothing here imports an event loop, a socket or a
JSON library (``tests/core/test_layering.py`` checks every module in this folder).
"""
