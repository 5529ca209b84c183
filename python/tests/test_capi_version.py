"""The binding refuses a libmoss_runtime.so of another C API (no GPU needed)."""

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("torch")  # importing moss_kernels registers the torch ops

from moss_kernels import LibraryMismatch, _capi  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]


def _compiler():
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("no C compiler")
    return compiler


def test_api_version_is_the_headers():
    source = '#include "moss/Runtime/moss_runtime.h"\nMOSS_RUNTIME_API_VERSION\n'
    expanded = subprocess.run([_compiler(), "-E", "-P", f"-I{REPO_ROOT / 'include'}", "-"], input=source,
                              check=True, capture_output=True, text=True).stdout
    assert expanded.split()[-1] == str(_capi.API_VERSION)


def test_loaded_library_reports_the_same_versions(moss_library):
    assert moss_library.moss_runtime_api_version() == _capi.API_VERSION
    assert _capi.runtime_version().count(".") == 2


def _stub_library(tmp_path, body):
    source, library = tmp_path / "stub.c", tmp_path / "libstub.so"
    source.write_text(body)
    subprocess.run([_compiler(), "-shared", "-fPIC", str(source), "-o", str(library)], check=True)
    return str(library)


def test_other_api_version_is_refused(tmp_path):
    path = _stub_library(tmp_path, 'int moss_runtime_api_version(void) { return 999; }\n'
                                   'const char *moss_runtime_version(void) { return "9.9.9"; }\n')
    with pytest.raises(LibraryMismatch, match=r"moss 9\.9\.9\) implements C API version 999; this package needs"):
        _capi._check_api_version(ctypes.CDLL(path), path)


def test_library_without_the_version_call_is_refused(tmp_path):
    path = _stub_library(tmp_path, "int moss_runtime_create(void) { return 0; }\n")
    with pytest.raises(LibraryMismatch, match="has no moss_runtime_api_version"):
        _capi._check_api_version(ctypes.CDLL(path), path)
