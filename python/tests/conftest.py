"""Shared setup of the Python tests.

Tests need torch (each module skips without it) but test_capi_binding.py,
which ctest runs too; the GPU tests also need an
sm_90 GPU, libmoss_runtime.so and a kernels dir, and skip with the reason
when one is missing. Like ctest, they read MOSS_TEST_KERNELS_DIR (default
kernels_generated/) and MOSS_TEST_WHITELIST (default
configs/h200-example.json) unless MOSS_KERNELS_DIR / MOSS_CODEC_GEMM_CONFIG
are set already.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "python"))

os.environ.setdefault("MOSS_KERNELS_DIR",
                      os.environ.get("MOSS_TEST_KERNELS_DIR", str(REPO_ROOT / "kernels_generated")))
os.environ.setdefault("MOSS_CODEC_GEMM_CONFIG",
                      os.environ.get("MOSS_TEST_WHITELIST", str(REPO_ROOT / "configs" / "h200-example.json")))


@pytest.fixture(scope="session")
def moss_library():
    """The loaded libmoss_runtime.so, or a skip saying why there is none."""
    from moss_kernels import LibraryNotFound, _capi

    try:
        return _capi.library()
    except LibraryNotFound as error:
        pytest.skip(f"libmoss_runtime.so not available: {error}")


@pytest.fixture(scope="session")
def cuda_device(moss_library):
    """An sm_90 device with the moss runtime created on it."""
    import torch

    import moss_kernels

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device visible to torch")
    capability = torch.cuda.get_device_capability()
    if capability != (9, 0):
        pytest.skip(f"the generated kernels are sm_90a (H100/H200); this GPU is sm_{capability[0]}{capability[1]}")
    manifest = Path(os.environ["MOSS_KERNELS_DIR"]) / "manifest.json"
    if not manifest.is_file():
        pytest.skip(f"no kernels: {manifest} is missing (build them with moss-aot)")
    moss_kernels.load_runtime(0)  # a broken kernels dir fails here, loudly
    return torch.device("cuda", 0)


@pytest.fixture(scope="session")
def check_report():
    """Appends one JSON line per streaming check to $MOSS_LAYER_CHECK_REPORT."""
    path = os.environ.get("MOSS_LAYER_CHECK_REPORT")

    def write(record: dict) -> None:
        if path:
            with open(path, "a") as f:
                f.write(json.dumps(record) + "\n")

    return write
