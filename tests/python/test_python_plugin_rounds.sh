#!/bin/sh
# The pytest plugin's --host-range-rounds: tests/python/test_plugin_rounds.py
# (skips, 77, when the module was not configured).
exec sh "${srcdir:-.}/tests/python/run_checks.sh" test_plugin_rounds.py
