"""The daemon suite: start-up, idle memory and a page tool's definition beside their baselines
(``suite.py``), claiming tabs among other sessions (``claims.py``), and the slow-body flood under a limit
of open files (``flood.py``)."""
