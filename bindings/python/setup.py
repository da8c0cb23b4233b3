"""Build steps pyproject.toml cannot say: bundling libtfjob in the wheel, on request.

    TFJOB_WHEEL_LIBRARY=P/lib/libtfjob.so.0 python -m build --wheel

puts that libtfjob.so.0 in the package (tfjob/libtfjob.so.0), and with it the program
tfjob-supervise that local runs start for each replica (found next to the library, as in a build
tree, or in ../libexec/tfjob/ of an installed prefix; TFJOB_WHEEL_SUPERVISE names it otherwise).
Such a wheel holds machine code: it is tagged for this platform (py3-none-linux_x86_64, ...) and
needs the libraries libtfjob links with (libyaml, jansson, libcurl) from the system, as the
library itself does. Without TFJOB_WHEEL_LIBRARY the wheel is pure Python (py3-none-any) and finds
an installed library at import (tfjob/_lib.py, docs/bindings.md).
"""
import os
import shutil
import stat

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel  # setuptools >= 70.1
except ImportError:  # older setuptools: the wheel package's
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

SONAME = "libtfjob.so.0"
SUPERVISE = "tfjob-supervise"


def bundle():
    """(library, tfjob-supervise) to put in the wheel, or None. Raises on a wrong setting."""
    lib = os.environ.get("TFJOB_WHEEL_LIBRARY")
    if not lib:
        return None
    if not os.path.isfile(lib):
        raise SystemExit(f"TFJOB_WHEEL_LIBRARY={lib}: no such file")
    sup = os.environ.get("TFJOB_WHEEL_SUPERVISE")
    if not sup:
        here = os.path.dirname(os.path.realpath(lib))
        for candidate in (os.path.join(here, SUPERVISE), os.path.join(here, "..", "libexec", "tfjob", SUPERVISE)):
            if os.access(candidate, os.X_OK):
                sup = candidate
                break
        else:
            raise SystemExit(f"TFJOB_WHEEL_LIBRARY={lib}: no {SUPERVISE} next to it or in ../libexec/tfjob/ "
                             "(set TFJOB_WHEEL_SUPERVISE)")
    elif not os.access(sup, os.X_OK):
        raise SystemExit(f"TFJOB_WHEEL_SUPERVISE={sup}: not an executable file")
    return lib, sup


class BuildPy(build_py):
    def run(self):
        super().run()
        files = bundle()
        target = os.path.join(self.build_lib, "tfjob")
        if not files:  # a pure wheel: no copy left in build/ by an earlier bundling build
            for name in (SONAME, SUPERVISE):
                if os.path.exists(os.path.join(target, name)):
                    os.remove(os.path.join(target, name))
        else:
            shutil.copyfile(files[0], os.path.join(target, SONAME))
            dest = os.path.join(target, SUPERVISE)
            shutil.copyfile(files[1], dest)
            os.chmod(dest, os.stat(dest).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class BundlingDistribution(Distribution):
    """With the library bundled, the package holds machine code: the wheel is not pure and its
    files go to platlib."""

    def has_ext_modules(self):
        return bundle() is not None


class BdistWheel(bdist_wheel):
    def get_tag(self):
        python, abi, plat = super().get_tag()
        if bundle():  # ctypes, no extension module: any Python 3, this platform
            return "py3", "none", plat
        return python, abi, plat


setup(cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel}, distclass=BundlingDistribution)
