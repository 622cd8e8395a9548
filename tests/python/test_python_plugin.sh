#!/bin/sh
# The pytest plugin of the Python module: tests/python/check_plugin.py
# (skips, 77, when the module was not configured).
exec sh "${srcdir:-.}/tests/python/run_checks.sh" check_plugin.py
