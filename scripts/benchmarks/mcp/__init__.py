"""The MCP suite: calls through both doors and both eras, spawn time and idle memory beside the SDK
baseline (``suite.py``), and a long tools/list of many tabs (``lists.py``)."""
