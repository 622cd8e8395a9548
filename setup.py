"""How pip builds the C extension `hostrange` (pyproject.toml holds the
rest): against the installed libhostrange where pkg-config finds it
(`pkg-config hostrange`), else with the client's sources built in, which
then needs the headers and libraries of protobuf-c and nanomsg and, in a
tree without the generated protocol code, protoc-c. The example
operators (ops/, CPU only) are always built in. HOSTRANGE_PY_BUILTIN=1
builds the client in even where pkg-config finds one."""
import os
import re
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))

PYTHON_SOURCES = ["python/module.c", "python/scope.c", "python/convert.c",
                  "python/ops.c", "python/device.c"]
OPS_SOURCES = ["ops/tensor.c", "ops/layout.c", "ops/binding.c",
               "ops/dispatch.c", "ops/operator.c", "ops/cache.c",
               "ops/cpu_add.c", "ops/cpu_gemm.c", "ops/memory.c",
               "ops/raw.c", "ops/slow.c", "ops/nocuda.c"]
CLIENT_SOURCES = ["client/clock.c", "client/intern.c", "client/encode.c",
                  "client/spool.c", "client/hostrange.c", "client/ship.c",
                  "client/registry.c", "proto/protocol.c", "proto/spool.c",
                  "proto/hostrange.pb-c.c"]


def version():
    """The version AC_INIT gives in configure.ac."""
    with open(os.path.join(HERE, "configure.ac"), encoding="utf-8") as f:
        m = re.search(r"AC_INIT\(\[hostrange\],\s*\[([^\]]+)\]", f.read())
    if m is None:
        raise RuntimeError("configure.ac: no AC_INIT version")
    return m.group(1)


def pkg_config(*args):
    """pkg-config's answer split into words, or None where it has none."""
    try:
        out = subprocess.run(["pkg-config", *args], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.split()


class BuildExt(build_ext):
    """Writes the config.h that the sources include (configure's, cut to
    what they use) and, for a client built in, the protocol's generated
    code where the tree has none; then builds."""

    def build_extensions(self):
        gen = os.path.join(os.path.abspath(self.build_temp), "hostrange-gen")
        os.makedirs(os.path.join(gen, "proto"), exist_ok=True)
        with open(os.path.join(gen, "config.h"), "w", encoding="utf-8") as f:
            f.write("#define _GNU_SOURCE 1\n#define PACKAGE_VERSION \"%s\"\n"
                    % version())
        for ext in self.extensions:
            ext.include_dirs.insert(0, gen)
            if "proto/hostrange.pb-c.c" not in ext.sources:
                continue
            if not os.path.exists(os.path.join(HERE, "proto",
                                               "hostrange.pb-c.c")):
                protoc = shutil.which("protoc-c")
                if protoc is None:
                    raise RuntimeError("protoc-c not found: install "
                                       "protobuf-c-compiler, or libhostrange "
                                       "with its pkg-config file")
                subprocess.run([protoc, "--proto_path=" + HERE,
                                "--c_out=" + gen,
                                os.path.join(HERE, "proto", "hostrange.proto")],
                               check=True)
                ext.sources = [os.path.join(gen, "proto", "hostrange.pb-c.c")
                               if s == "proto/hostrange.pb-c.c" else s
                               for s in ext.sources]
        super().build_extensions()


def extension():
    flags = pkg_config("--cflags", "--libs", "hostrange")
    builtin = os.environ.get("HOSTRANGE_PY_BUILTIN") == "1" or flags is None
    sources = PYTHON_SOURCES + OPS_SOURCES
    bindir = ""
    if builtin:
        sources = sources + CLIENT_SOURCES
        flags = (pkg_config("--cflags", "--libs", "libprotobuf-c", "nanomsg")
                 or ["-lprotobuf-c", "-lnanomsg"]) + ["-lpthread"]
    else:
        # The prefix is relative to the .pc file's own directory
        # (${pcfiledir}/../..); the programs' directory is written out
        # plainly.
        prefix = pkg_config("--variable=prefix", "hostrange")
        if prefix:
            bindir = os.path.realpath(os.path.join(prefix[0], "bin"))
    include_dirs = [HERE, os.path.join(HERE, "client", "include")]
    library_dirs, libraries, extra = [], [], []
    for w in flags:
        if w.startswith("-I"):
            include_dirs.append(w[2:])
        elif w.startswith("-L"):
            library_dirs.append(w[2:])
        elif w.startswith("-l"):
            libraries.append(w[2:])
        else:
            extra.append(w)
    return Extension(
        "hostrange", sources=sources, include_dirs=include_dirs,
        library_dirs=library_dirs, libraries=libraries,
        define_macros=[("HRPY_VERSION", '"%s"' % version()),
                       ("HRPY_BINDIR", '"%s"' % bindir)],
        extra_compile_args=["-std=gnu11", "-fvisibility=hidden"] + extra,
        extra_link_args=["-lm"])


setup(version=version(), package_dir={"": "python"},
      py_modules=["hostrange_pytest"], ext_modules=[extension()],
      cmdclass={"build_ext": BuildExt})
