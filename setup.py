"""The build step beside pyproject.toml (which holds everything else): the CPU engine's
compiled functions, compiled ahead into the wheel.

After setuptools copies the packages into the build folder, ``build_py`` runs turbobc/_aot.py,
which compiles every function of turbobc/_compiled.py with numba.pycc into the extension
``turbobc/_aot_core`` (numba and NumPy are build requirements; a C compiler must be present).
A person's first call then loads compiled code instead of waiting for numba (docs/architecture.md,
"Compiled ahead"). Where the compile fails (no C compiler, say), the package installs without
the extension, says so, and numba compiles at first use as before. ``TURBOBC_AOT_BUILD=0``
skips it. The wheel is tagged for this platform and Python: the extension is native code.
"""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

_RUN_AOT = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("_turbobc_aot", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.main(["--into", sys.argv[2]])
"""


class BuildWithCompiledFunctions(build_py):
    """build_py, then the CPU functions compiled ahead into the build folder."""

    def run(self):
        super().run()
        if os.environ.get("TURBOBC_AOT_BUILD", "1") == "0" or self.dry_run:
            return
        source = Path(__file__).resolve().parent / "turbobc" / "_aot.py"
        target = Path(self.build_lib) / "turbobc"
        done = subprocess.run([sys.executable, "-c", _RUN_AOT, str(source), str(target)])
        if done.returncode != 0:
            print("turbobc: the CPU functions could not be compiled ahead (see above); the "
                  "package installs without them and numba compiles them at first use",
                  file=sys.stderr)


class NativeDistribution(Distribution):
    """A distribution with native code: its wheel carries this platform's tag."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithCompiledFunctions}, distclass=NativeDistribution)
