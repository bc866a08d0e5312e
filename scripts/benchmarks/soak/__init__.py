"""The soak suite: clients on the real extension for an hour, nothing lost and memory flat
(``suite.py``), and the clients, each through a door of its own (``clients.py``)."""
