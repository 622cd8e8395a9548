#!/bin/sh
# The pytest plugin of the Python module: tests/python/test_plugin.py
# (skips, 77, when the module was not configured).
exec sh "${srcdir:-.}/tests/python/run_checks.sh" test_plugin.py
