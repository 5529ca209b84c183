"""The ctypes binding against the C header and the library (no GPU needed)."""

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("torch")

from moss_kernels import MossError, MossStatus, _capi  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]

_LAYOUT_PROGRAM = r"""
#include "moss/Runtime/moss_runtime.h"
#include <stddef.h>
#include <stdio.h>
#define FIELD(f) printf("%s %zu\n", #f, offsetof(moss_attention_args, f));
int main(void) {
  printf("sizeof %zu\n", sizeof(moss_attention_args));
  FIELD(B) FIELD(H) FIELD(T) FIELD(S) FIELD(D) FIELD(q) FIELD(q_stride) FIELD(k)
  FIELD(k_stride) FIELD(v) FIELD(v_stride) FIELD(mask) FIELD(mask_stride) FIELD(out)
  FIELD(layout) FIELD(skip_empty_tiles) FIELD(scale)
  return 0;
}
"""


def test_attention_args_match_the_c_header(tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("no C compiler to read the header's layout")
    source, program = tmp_path / "layout.c", tmp_path / "layout"
    source.write_text(_LAYOUT_PROGRAM)
    subprocess.run([compiler, f"-I{REPO_ROOT / 'include'}", str(source), "-o", str(program)], check=True)
    lines = subprocess.run([str(program)], check=True, capture_output=True, text=True).stdout.split("\n")
    c_layout = {name: int(value) for name, value in (line.split() for line in lines if line)}
    py_layout = {name: getattr(_capi.AttentionArgs, name).offset for name, _ in _capi.AttentionArgs._fields_}
    py_layout["sizeof"] = ctypes.sizeof(_capi.AttentionArgs)
    assert py_layout == c_layout


def test_create_reports_the_runtime_message(moss_library, tmp_path):
    missing = tmp_path / "no-such-kernels"
    with pytest.raises(MossError) as caught:
        _capi.create(str(missing), None)
    assert caught.value.status == MossStatus.MANIFEST
    assert str(missing) in caught.value.message
    assert "MOSS_ERROR_MANIFEST" in str(caught.value)


def test_missing_library_names_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("MOSS_RUNTIME_LIB", str(tmp_path / "libmoss_runtime.so"))
    with pytest.raises(_capi.LibraryNotFound, match="MOSS_RUNTIME_LIB"):
        _capi.find_library()
