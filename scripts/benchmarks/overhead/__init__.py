"""The overhead suite: what the extension costs the pages a person opens (``suite.py``), with its
browsers and the measurements of one page load (``loads.py``)."""
