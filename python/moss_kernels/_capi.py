"""ctypes binding of the C API in include/moss/Runtime/moss_runtime.h.

Plain ctypes, no torch: this module only finds libmoss_runtime.so, declares
the exported functions and turns a failed status into MossError carrying
moss_runtime_last_error's text. Keep it in step with the header: API_VERSION
is the header's MOSS_RUNTIME_API_VERSION, and a library that reports another
one is refused at load rather than called with the wrong layout.
"""

from __future__ import annotations

import ctypes
import enum
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import NamedTuple, Optional

_LIBRARY_NAME = "libmoss_runtime.so"
API_VERSION = 5  # MOSS_RUNTIME_API_VERSION of the header these declarations follow
_REPO_ROOT = Path(__file__).resolve().parents[2]


class MossStatus(enum.IntEnum):
    """moss_status_t."""

    OK = 0
    INVALID_ARGUMENT = 1
    MANIFEST = 2
    CACHE_KEY_MISMATCH = 3
    CUDA = 4
    CUBLAS = 5
    UNSUPPORTED = 6


class Epilogue(enum.IntEnum):
    """moss_epilogue_t: the `mode` of moss::ffn_gemm (the whitelist key's)."""

    NONE = 0
    GELU = 1  # exact erf-GELU
    LAYERSCALE_RESIDUAL = 2  # bf16(bf16(v * scale[n]) + residual[m, n])


class Layout(enum.IntEnum):
    """moss_layout_t: storage order of the attention output."""

    BTHD = 0
    BHTD = 1


class MossError(RuntimeError):
    """A failed C API call: `status` and the runtime's own message."""

    def __init__(self, call: str, status: int, message: str):
        try:
            name = f"MOSS_ERROR_{MossStatus(status).name}"
        except ValueError:  # a newer runtime's status
            name = f"status {status}"
        super().__init__(f"{call} failed with {name}: {message}")
        self.call, self.status, self.message = call, status, message


class LibraryNotFound(FileNotFoundError):
    """libmoss_runtime.so is neither at $MOSS_RUNTIME_LIB nor in a build dir."""


class LibraryMismatch(RuntimeError):
    """libmoss_runtime.so implements another C API than this package declares."""


class AttentionArgs(ctypes.Structure):
    """moss_attention_args, field for field (natural alignment, as in C)."""

    _fields_ = [
        ("B", ctypes.c_int64),
        ("H", ctypes.c_int64),
        ("T", ctypes.c_int64),
        ("S", ctypes.c_int64),
        ("D", ctypes.c_int64),
        ("q", ctypes.c_void_p),
        ("q_stride", ctypes.c_int64 * 4),
        ("k", ctypes.c_void_p),
        ("k_stride", ctypes.c_int64 * 4),
        ("v", ctypes.c_void_p),
        ("v_stride", ctypes.c_int64 * 4),
        ("mask", ctypes.c_void_p),
        ("mask_stride", ctypes.c_int64 * 3),
        ("out", ctypes.c_void_p),
        ("layout", ctypes.c_int),  # a C enum: int-sized
        ("skip_empty_tiles", ctypes.c_int),
        ("scale", ctypes.c_float),
        ("slot_positions", ctypes.c_void_p),
        ("slot_positions_stride_b", ctypes.c_int64),
        ("query_positions", ctypes.c_void_p),
        ("query_positions_stride_b", ctypes.c_int64),
    ]


class RingCache(ctypes.Structure):
    """moss_ring_cache, field for field."""

    _fields_ = [
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("slot_positions", ctypes.c_void_p),
        ("capacity", ctypes.c_int64),
    ]


# What a wheel bundles (scripts/build-wheel.sh): the library, the kernels of
# the shipped whitelists and the whitelists. Absent in a source checkout.
BUNDLE_DIR = Path(__file__).resolve().parent / "_bundled"
# The bundled kernels a runtime loads when no environment variable names any.
BUNDLED_KERNELS = "h200-tuned-pdl"


def bundled_library() -> Optional[Path]:
    """The wheel's libmoss_runtime.so, or None outside a wheel install."""
    path = BUNDLE_DIR / "lib" / _LIBRARY_NAME
    return path if path.is_file() else None


def bundled_kernels(name: str = BUNDLED_KERNELS) -> Optional[tuple[Path, Path]]:
    """(kernels dir, whitelist) of the wheel's kernels `name`, or None."""
    kernels = BUNDLE_DIR / "kernels" / name
    whitelist = BUNDLE_DIR / "whitelists" / f"{name}.json"
    if (kernels / "manifest.json").is_file() and whitelist.is_file():
        return kernels, whitelist
    return None


def kernels_and_whitelist() -> tuple[Optional[str], Optional[str]]:
    """The runtime's (kernels dir, whitelist): $MOSS_KERNELS_DIR with None
    (the C API reads $MOSS_CODEC_GEMM_CONFIG), else, when neither variable
    is set, the wheel's bundled pair, else (None, None): fallback GEMMs
    only."""
    explicit = os.environ.get("MOSS_KERNELS_DIR") or None
    if explicit or os.environ.get("MOSS_CODEC_GEMM_CONFIG"):
        return explicit, None
    bundled = bundled_kernels()
    return (str(bundled[0]), str(bundled[1])) if bundled else (None, None)


class CacheKey(NamedTuple):
    """What decides the kernels a runtime runs, for a serving engine's
    compile-cache key: the manifest's cache_key (over the whitelist's bytes,
    the moss version, the chip and the compiler) and the whitelist's sha256;
    both None when no kernels are configured (fallback GEMMs only)."""

    manifest: Optional[str]
    whitelist_sha256: Optional[str]


def cache_key(kernels_dir: Optional[str] = None, whitelist: Optional[str] = None) -> CacheKey:
    """The CacheKey of the kernels a runtime created with these arguments
    (None: as load_runtime resolves them) would load. Reads the manifest and
    the whitelist's bytes, no library and no GPU; raises ValueError when the
    whitelist is not the one the kernels were built from (the runtime would
    refuse them) or a file is missing or malformed."""
    if kernels_dir is None:
        kernels_dir, default_whitelist = kernels_and_whitelist()
        whitelist = whitelist or default_whitelist
    whitelist = whitelist or os.environ.get("MOSS_CODEC_GEMM_CONFIG") or None
    if kernels_dir is None:
        return CacheKey(None, None)
    manifest_path = Path(kernels_dir) / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text())
        key, built_from = manifest["cache_key"], manifest["whitelist_sha256"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{manifest_path}: no readable cache_key and whitelist_sha256 ({error})") from error
    if whitelist is None:
        return CacheKey(key, None)  # the runtime then serves every GEMM by the fallback
    try:
        digest = hashlib.sha256(Path(whitelist).read_bytes()).hexdigest()
    except OSError as error:
        raise ValueError(f"whitelist {whitelist}: {error}") from error
    if digest != built_from:
        raise ValueError(f"whitelist {whitelist} (sha256 {digest}) is not the one the kernels in {kernels_dir} "
                         f"were built from (sha256 {built_from})")
    return CacheKey(key, digest)


def library_candidates() -> list[Path]:
    """Where a build of this checkout puts the library, most specific first."""
    build_dirs = []
    if os.environ.get("MOSS_BUILD_DIR"):
        build_dirs.append(Path(os.environ["MOSS_BUILD_DIR"]))
    build_dirs += [_REPO_ROOT / "build", _REPO_ROOT / "build-rt"]
    return [d / "runtime" / _LIBRARY_NAME for d in build_dirs]


def find_library() -> str:
    """$MOSS_RUNTIME_LIB if set (must exist), else the wheel's bundled
    library, else the first build of this checkout that has one, else the
    bare name for the dynamic loader (LD_LIBRARY_PATH, ldconfig)."""
    explicit = os.environ.get("MOSS_RUNTIME_LIB")
    if explicit:
        if not Path(explicit).is_file():
            raise LibraryNotFound(f"MOSS_RUNTIME_LIB={explicit} is not a file")
        return explicit
    bundled = bundled_library()
    if bundled:
        return str(bundled)
    for candidate in library_candidates():
        if candidate.is_file():
            return str(candidate)
    return _LIBRARY_NAME


_lock = threading.Lock()
_library: Optional[ctypes.CDLL] = None


def _check_api_version(lib: ctypes.CDLL, path: str) -> None:
    """Refuses a library whose C API differs from the one declared here."""
    try:
        api_version = lib.moss_runtime_api_version
    except AttributeError:
        raise LibraryMismatch(
            f"{path} has no moss_runtime_api_version: it predates this package's C API "
            f"(version {API_VERSION}); rebuild the runtime from this checkout"
        ) from None
    api_version.argtypes, api_version.restype = [], ctypes.c_int
    lib.moss_runtime_version.argtypes, lib.moss_runtime_version.restype = [], ctypes.c_char_p
    found = api_version()
    if found != API_VERSION:
        version = lib.moss_runtime_version().decode(errors="replace")
        raise LibraryMismatch(
            f"{path} (moss {version}) implements C API version {found}; this package "
            f"needs version {API_VERSION}: rebuild the runtime from this checkout or point "
            f"MOSS_RUNTIME_LIB at a matching one"
        )


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    c_int64, c_void_p = ctypes.c_int64, ctypes.c_void_p
    lib.moss_runtime_create.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(c_void_p)]
    lib.moss_runtime_create.restype = ctypes.c_int
    lib.moss_runtime_destroy.argtypes = [c_void_p]
    lib.moss_runtime_destroy.restype = None
    lib.moss_runtime_last_error.argtypes = [c_void_p]
    lib.moss_runtime_last_error.restype = ctypes.c_char_p
    lib.moss_gemm_is_selected.argtypes = [c_void_p, c_int64, c_int64, c_int64, ctypes.c_int]
    lib.moss_gemm_is_selected.restype = ctypes.c_int
    lib.moss_ffn_gemm.argtypes = [c_void_p, c_int64, c_int64, c_int64, ctypes.c_int] + [c_void_p] * 6
    lib.moss_ffn_gemm.restype = ctypes.c_int
    lib.moss_ffn_gemm_live.argtypes = [c_void_p, c_int64, c_int64, c_int64, ctypes.c_int] + [c_void_p] * 7
    lib.moss_ffn_gemm_live.restype = ctypes.c_int
    lib.moss_layernorm_gemm_is_selected.argtypes = [c_void_p, c_int64, c_int64, c_int64, ctypes.c_int]
    lib.moss_layernorm_gemm_is_selected.restype = ctypes.c_int
    lib.moss_layernorm_gemm.argtypes = (
        [c_void_p, c_int64, c_int64, c_int64, ctypes.c_int] + [c_void_p] * 3 + [ctypes.c_float] + [c_void_p] * 3
    )
    lib.moss_layernorm_gemm.restype = ctypes.c_int
    lib.moss_qkv_rope_cache_is_selected.argtypes = [c_void_p, c_int64, c_int64, c_int64]
    lib.moss_qkv_rope_cache_is_selected.restype = ctypes.c_int
    lib.moss_qkv_rope_cache.argtypes = (
        [c_void_p, c_int64, c_int64, c_int64] + [c_void_p] * 3 + [ctypes.c_float]
        + [c_void_p] * 4 + [ctypes.POINTER(RingCache), c_void_p]
    )
    lib.moss_qkv_rope_cache.restype = ctypes.c_int
    lib.moss_streaming_attention.argtypes = [c_void_p, ctypes.POINTER(AttentionArgs), c_void_p]
    lib.moss_streaming_attention.restype = ctypes.c_int
    return lib


def library() -> ctypes.CDLL:
    """The loaded library (loaded once per process)."""
    global _library
    with _lock:
        if _library is None:
            path = find_library()
            try:
                loaded = ctypes.CDLL(path)
            except OSError as error:
                searched = ", ".join(str(p) for p in library_candidates())
                raise LibraryNotFound(
                    f"cannot load {path} ({error}); build the runtime "
                    f"(cmake -DMOSS_BUILD_RUNTIME=ON) and set MOSS_RUNTIME_LIB "
                    f"to the .so, or put it on LD_LIBRARY_PATH (searched {searched})"
                ) from error
            _check_api_version(loaded, path)
            _library = _declare(loaded)
        return _library


def runtime_version() -> str:
    """The moss version of the loaded library (moss_runtime_version)."""
    return library().moss_runtime_version().decode()


def check(status: int, call: str, handle: Optional[int]) -> None:
    """Raises MossError with the runtime's message unless status is MOSS_OK."""
    if status != MossStatus.OK:
        text = library().moss_runtime_last_error(handle)
        raise MossError(call, status, text.decode(errors="replace") if text else "")


def create(kernels_dir: Optional[str], whitelist_path: Optional[str]) -> int:
    """moss_runtime_create for the calling thread's current CUDA context.
    None means "not given" (whitelist: the C API then reads
    $MOSS_CODEC_GEMM_CONFIG itself)."""
    handle = ctypes.c_void_p()
    encode = lambda s: None if s is None else os.fsencode(s)  # noqa: E731
    status = library().moss_runtime_create(encode(kernels_dir), encode(whitelist_path), ctypes.byref(handle))
    check(status, "moss_runtime_create", None)
    return handle.value
