"""The package's version: moss's (CMake's project version, MOSS_VERSION),
checked equal by python/tests/test_capi_binding.py."""

__version__ = "0.1.0"
