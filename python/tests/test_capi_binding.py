"""The ctypes binding against the C header and the library: no GPU, no torch.

Plain unittest, so ctest runs it wherever the runtime builds (CI has neither
pytest nor torch); pytest collects it too. moss_kernels/_capi.py is loaded by
path: importing the package would import torch.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

REPO_ROOT = Path(__file__).resolve().parents[2]
INCLUDE = REPO_ROOT / "include"


def _load_capi():
    spec = importlib.util.spec_from_file_location("moss_capi_under_test",
                                                  REPO_ROOT / "python" / "moss_kernels" / "_capi.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_capi = _load_capi()
_COMPILER = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")

_LAYOUT_PROGRAM = r"""
#include "moss/Runtime/moss_runtime.h"
#include <stddef.h>
#include <stdio.h>
#define FIELD(f) printf("%s %zu\n", #f, offsetof(moss_attention_args, f));
int main(void) {
  printf("sizeof %zu\n", sizeof(moss_attention_args));
  FIELD(B) FIELD(H) FIELD(T) FIELD(S) FIELD(D) FIELD(q) FIELD(q_stride) FIELD(k)
  FIELD(k_stride) FIELD(v) FIELD(v_stride) FIELD(mask) FIELD(mask_stride) FIELD(out)
  FIELD(layout) FIELD(skip_empty_tiles) FIELD(scale) FIELD(slot_positions)
  FIELD(slot_positions_stride_b) FIELD(query_positions) FIELD(query_positions_stride_b)
  return 0;
}
"""

_RING_CACHE_PROGRAM = r"""
#include "moss/Runtime/moss_runtime.h"
#include <stddef.h>
#include <stdio.h>
#define FIELD(f) printf("%s %zu\n", #f, offsetof(moss_ring_cache, f));
int main(void) {
  printf("sizeof %zu\n", sizeof(moss_ring_cache));
  FIELD(k) FIELD(v) FIELD(slot_positions) FIELD(capacity)
  return 0;
}
"""

_ENUM_PROGRAM = r"""
#include "moss/Runtime/moss_runtime.h"
#include <stdio.h>
#define VALUE(kind, name, c) printf("%s %s %d\n", kind, name, (int)(c));
int main(void) {
  VALUE("status", "OK", MOSS_OK)
  VALUE("status", "INVALID_ARGUMENT", MOSS_ERROR_INVALID_ARGUMENT)
  VALUE("status", "MANIFEST", MOSS_ERROR_MANIFEST)
  VALUE("status", "CACHE_KEY_MISMATCH", MOSS_ERROR_CACHE_KEY_MISMATCH)
  VALUE("status", "CUDA", MOSS_ERROR_CUDA)
  VALUE("status", "CUBLAS", MOSS_ERROR_CUBLAS)
  VALUE("status", "UNSUPPORTED", MOSS_ERROR_UNSUPPORTED)
  VALUE("epilogue", "NONE", MOSS_EPILOGUE_NONE)
  VALUE("epilogue", "GELU", MOSS_EPILOGUE_GELU)
  VALUE("epilogue", "LAYERSCALE_RESIDUAL", MOSS_EPILOGUE_LAYERSCALE_RESIDUAL)
  VALUE("layout", "BTHD", MOSS_LAYOUT_BTHD)
  VALUE("layout", "BHTD", MOSS_LAYOUT_BHTD)
  return 0;
}
"""


@unittest.skipIf(_COMPILER is None, "no C compiler to read the header")
class HeaderTest(unittest.TestCase):
    """The declarations of _capi.py against include/moss/Runtime/moss_runtime.h."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="moss-capi-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def _run_c(self, source: str) -> list[list[str]]:
        path, program = self.tmp / "program.c", self.tmp / "program"
        path.write_text(source)
        subprocess.run([_COMPILER, f"-I{INCLUDE}", str(path), "-o", str(program)], check=True)
        out = subprocess.run([str(program)], check=True, capture_output=True, text=True).stdout
        return [line.split() for line in out.splitlines() if line]

    def test_attention_args_match_the_c_header(self):
        c_layout = {name: int(value) for name, value in self._run_c(_LAYOUT_PROGRAM)}
        py_layout = {name: getattr(_capi.AttentionArgs, name).offset for name, _ in _capi.AttentionArgs._fields_}
        py_layout["sizeof"] = ctypes.sizeof(_capi.AttentionArgs)
        self.assertEqual(py_layout, c_layout)

    def test_ring_cache_matches_the_c_header(self):
        c_layout = {name: int(value) for name, value in self._run_c(_RING_CACHE_PROGRAM)}
        py_layout = {name: getattr(_capi.RingCache, name).offset for name, _ in _capi.RingCache._fields_}
        py_layout["sizeof"] = ctypes.sizeof(_capi.RingCache)
        self.assertEqual(py_layout, c_layout)

    def test_enums_match_the_c_header(self):
        enums = {"status": _capi.MossStatus, "epilogue": _capi.Epilogue, "layout": _capi.Layout}
        c_values = {(kind, name): int(value) for kind, name, value in self._run_c(_ENUM_PROGRAM)}
        py_values = {(kind, member.name): int(member) for kind, enum in enums.items() for member in enum}
        self.assertEqual(py_values, c_values)

    def test_api_version_is_the_headers(self):
        source = '#include "moss/Runtime/moss_runtime.h"\nMOSS_RUNTIME_API_VERSION\n'
        expanded = subprocess.run([_COMPILER, "-E", "-P", f"-I{INCLUDE}", "-"], input=source, check=True,
                                  capture_output=True, text=True).stdout
        self.assertEqual(expanded.split()[-1], str(_capi.API_VERSION))

    def _stub_library(self, body: str) -> str:
        source, library = self.tmp / "stub.c", self.tmp / "libstub.so"
        source.write_text(body)
        subprocess.run([_COMPILER, "-shared", "-fPIC", str(source), "-o", str(library)], check=True)
        return str(library)

    def test_other_api_version_is_refused(self):
        path = self._stub_library('int moss_runtime_api_version(void) { return 999; }\n'
                                  'const char *moss_runtime_version(void) { return "9.9.9"; }\n')
        with self.assertRaisesRegex(_capi.LibraryMismatch,
                                    r"moss 9\.9\.9\) implements C API version 999; this package needs"):
            _capi._check_api_version(ctypes.CDLL(path), path)

    def test_library_without_the_version_call_is_refused(self):
        path = self._stub_library("int moss_runtime_create(void) { return 0; }\n")
        with self.assertRaisesRegex(_capi.LibraryMismatch, "has no moss_runtime_api_version"):
            _capi._check_api_version(ctypes.CDLL(path), path)


class LibraryTest(unittest.TestCase):
    """The built libmoss_runtime.so through the binding (ctest sets
    MOSS_RUNTIME_LIB to it; elsewhere a build of this checkout, if any)."""

    def test_bundled_library_and_kernels_are_found_first(self):
        with tempfile.TemporaryDirectory() as bundle:
            bundle = Path(bundle)
            (bundle / "lib").mkdir()
            (bundle / "lib" / "libmoss_runtime.so").write_bytes(b"")
            with mock.patch.object(_capi, "BUNDLE_DIR", bundle), mock.patch.dict(os.environ, clear=False) as env:
                env.pop("MOSS_RUNTIME_LIB", None)
                self.assertEqual(_capi.find_library(), str(bundle / "lib" / "libmoss_runtime.so"))
                # Kernels count only with their manifest and whitelist.
                self.assertIsNone(_capi.bundled_kernels("set"))
                (bundle / "kernels" / "set").mkdir(parents=True)
                (bundle / "kernels" / "set" / "manifest.json").write_text("{}")
                self.assertIsNone(_capi.bundled_kernels("set"))
                (bundle / "whitelists").mkdir()
                (bundle / "whitelists" / "set.json").write_text("{}")
                self.assertEqual(_capi.bundled_kernels("set"),
                                 (bundle / "kernels" / "set", bundle / "whitelists" / "set.json"))
                env["MOSS_RUNTIME_LIB"] = str(bundle / "lib" / "libmoss_runtime.so")
                self.assertEqual(_capi.find_library(), env["MOSS_RUNTIME_LIB"])

    def test_cache_key_is_the_manifests_and_refuses_another_whitelist(self):
        with tempfile.TemporaryDirectory() as work:
            work = Path(work)
            kernels, whitelist, other = work / "kernels", work / "wl.json", work / "other.json"
            kernels.mkdir()
            whitelist.write_text('{"1,3072,768,1": [16, 64, 64, 1]}')
            other.write_text('{"2,3072,768,1": [16, 64, 64, 1]}')
            digest = hashlib.sha256(whitelist.read_bytes()).hexdigest()
            (kernels / "manifest.json").write_text(json.dumps({"cache_key": "ab" * 32, "whitelist_sha256": digest}))
            key = _capi.cache_key(str(kernels), str(whitelist))
            self.assertEqual(key, _capi.CacheKey("ab" * 32, digest))
            with self.assertRaisesRegex(ValueError, "is not the one the kernels in"):
                _capi.cache_key(str(kernels), str(other))
            with self.assertRaisesRegex(ValueError, "manifest.json: no readable cache_key"):
                _capi.cache_key(str(work), str(whitelist))
            # The environment decides when no argument does; nothing set: no kernels.
            with mock.patch.object(_capi, "BUNDLE_DIR", work / "none"), mock.patch.dict(os.environ) as env:
                env.pop("MOSS_KERNELS_DIR", None)
                env.pop("MOSS_CODEC_GEMM_CONFIG", None)
                self.assertEqual(_capi.cache_key(), _capi.CacheKey(None, None))
                env["MOSS_KERNELS_DIR"], env["MOSS_CODEC_GEMM_CONFIG"] = str(kernels), str(whitelist)
                self.assertEqual(_capi.cache_key(), key)

    def test_package_version_is_mosses(self):
        cmake = (REPO_ROOT / "CMakeLists.txt").read_text()
        version = re.search(r"^project\(moss VERSION ([0-9.]+)", cmake, re.M).group(1)
        package = (REPO_ROOT / "python" / "moss_kernels" / "_version.py").read_text()
        self.assertIn(f'__version__ = "{version}"', package)

    def test_missing_library_names_the_variable(self):
        with mock.patch.dict(os.environ, {"MOSS_RUNTIME_LIB": "/nonexistent/libmoss_runtime.so"}):
            with self.assertRaisesRegex(_capi.LibraryNotFound, "MOSS_RUNTIME_LIB=/nonexistent"):
                _capi.find_library()

    def _library(self):
        try:
            return _capi.library()
        except _capi.LibraryNotFound as error:
            self.skipTest(f"libmoss_runtime.so not available: {error}")

    def test_loaded_library_reports_the_same_versions(self):
        lib = self._library()
        self.assertEqual(lib.moss_runtime_api_version(), _capi.API_VERSION)
        self.assertRegex(_capi.runtime_version(), r"^\d+\.\d+\.\d+$")

    def test_create_reports_the_runtime_message(self):
        self._library()
        missing = Path(tempfile.gettempdir()) / f"moss-no-such-kernels-{os.getpid()}"
        with self.assertRaises(_capi.MossError) as caught:
            _capi.create(str(missing), None)
        self.assertEqual(caught.exception.status, _capi.MossStatus.MANIFEST)
        self.assertIn(str(missing), caught.exception.message)
        self.assertIn("MOSS_ERROR_MANIFEST", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
