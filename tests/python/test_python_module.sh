#!/bin/sh
# The Python module hostrange: tests/python/test_module.py (skips, 77,
# when the module was not configured).
exec sh "${srcdir:-.}/tests/python/run_checks.sh" test_module.py
