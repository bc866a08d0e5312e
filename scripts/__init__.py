"""The project's scripts: the shell commands beside this file, and the benchmark's package
(``scripts.benchmarks``), which ``scripts/bench`` runs and ``tests/bench`` imports from the project's root.

A package only so that the benchmark imports as ``scripts.benchmarks`` from the root, as ``broker`` and
``tests`` do; it imports nothing.
"""
