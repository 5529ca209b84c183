"""setuptools hooks the pyproject cannot state: the wheel carries a native
library (a platform wheel, not py3-none-any), builds outside CMake's build/,
and is refused without its bundle (scripts/build-wheel.sh fills it)."""

from pathlib import Path

from setuptools import setup
from setuptools.dist import Distribution
from wheel.bdist_wheel import bdist_wheel

BUNDLE = Path(__file__).resolve().parent / "python" / "moss_kernels" / "_bundled"


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """Any Python 3 on this platform: the library is loaded with ctypes, not
    imported as an extension module."""

    def get_tag(self):
        return ("py3", "none", super().get_tag()[2])


if not (BUNDLE / "lib" / "libmoss_runtime.so").is_file():
    raise SystemExit(f"{BUNDLE} holds no libmoss_runtime.so: build the wheel with scripts/build-wheel.sh, "
                     "which bundles the runtime and the kernels first")

setup(distclass=BinaryDistribution, cmdclass={"bdist_wheel": PlatformWheel},
      options={"build": {"build_base": "build-wheel"}})
