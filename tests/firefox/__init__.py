"""The real extension in headless Firefox ESR over WebDriver BiDi."""
