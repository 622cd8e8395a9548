#!/bin/sh
# Runs one of the checks of tests/python (its file name is the argument)
# with the interpreter configure chose and its pytest, against the build
# tree. Exits 77 (skipped) when the module was not configured or that
# interpreter has no pytest. Used by tests/python/test_python_*.sh (test_module.py, test_plugin.py).
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

# A module built with AddressSanitizer needs the sanitizer's runtime loaded
# before anything else in the interpreter; the interpreter's own memory at
# exit is not this project's leak.
asan=
for m in "$top"/python/hostrange*.so; do
    if [ -e "$m" ] && command -v ldd >/dev/null 2>&1; then
        asan=$(ldd "$m" | awk '/libasan/ { print $3 }')
    fi
done
if [ -n "$asan" ]; then
    LD_PRELOAD="$asan${LD_PRELOAD:+ $LD_PRELOAD}"
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    export LD_PRELOAD ASAN_OPTIONS
fi

PYTHONPATH=$HRPY_PATH
PYTHONDONTWRITEBYTECODE=1
HRPY_SRCDIR=$src
export PYTHONPATH PYTHONDONTWRITEBYTECODE HRPY_SRCDIR HR_PYTHON HRPY_PATH \
    HRPY_OFF_PATH HRPY_OTHER_VERSION HRPY_PROFILING
cd "$top"
exec "$HR_PYTHON" -m pytest -p no:cacheprovider -q -rs \
    "$src/tests/python/$1"
