"""The running broker through all its doors: limits, load, cancels, results, the built-in and browser-wide tools, the
person's say, what serving loads, fuzzing.
"""
