"""The real extension in headless Chromium."""
