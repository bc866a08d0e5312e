"""The tokens suite: a scripted agent's tasks through ours and Playwright MCP (``suite.py``), the agent
that reads answers as a real one would (``agent.py``) and its tasks (``flows.py``)."""
