"""Fixtures and hooks of the browser tests; the harness itself is ``labharness.py``."""

from labharness import browser, lab, lab_server, pytest_runtest_makereport

__all__ = ["browser", "lab", "lab_server", "pytest_runtest_makereport"]
