"""Printing rendered objects and diagnostics."""
