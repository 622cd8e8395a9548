#!/bin/sh
# The Python pytest plugin (tests/python/check_plugin.py) against the
# build tree, with the interpreter configure chose and its pytest. Skips (77)
# when the module was not configured or that interpreter has no pytest.
set -eu
top=$(cd "${top_builddir:-.}" && pwd)
src=$(cd "${srcdir:-.}" && pwd)
if [ ! -f "$top/python/check.env" ]; then
    echo "the Python module was not configured (--with-python): skipped"
    exit 77
fi
. "$top/python/check.env"
if ! "$HR_PYTHON" -c 'import pytest' 2>/dev/null; then
    echo "$HR_PYTHON has no pytest (python3-pytest): skipped"
    exit 77
fi
PYTHONPATH=$HRPY_PATH
PYTHONDONTWRITEBYTECODE=1
HRPY_SRCDIR=$src
export PYTHONPATH PYTHONDONTWRITEBYTECODE HRPY_SRCDIR HR_PYTHON HRPY_PATH \
    HRPY_OFF_PATH HRPY_OTHER_VERSION HRPY_PROFILING
cd "$top"
exec "$HR_PYTHON" -m pytest -p no:cacheprovider -q -rs \
    "$src/tests/python/check_plugin.py"
