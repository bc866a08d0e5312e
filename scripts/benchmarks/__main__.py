"""``python -m scripts.benchmarks``, which ``scripts/bench`` runs: the command line of :mod:`.cli`."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
