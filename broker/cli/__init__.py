"""The ``browser-mcp`` command line, one module per command group; ``broker/__main__.py`` dispatches.

May import anything in the package: it is the top layer. The commands that install or check
(``native-host``, ``install-native-host``, ``doctor``, ``service``, ``extension``) live in
:mod:`broker.install`, each imported only for the command that runs.
"""
