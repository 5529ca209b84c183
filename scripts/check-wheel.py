#!/usr/bin/env python3
"""Checks a moss_kernels wheel without installing it (stdlib only, no torch,
no GPU): the package's modules, its version (= MOSS_VERSION of the C header
build), torch as a dependency, libmoss_runtime.so with the C API version as
its SONAME, and for every bundled kernels folder a manifest whose cubins'
sha256 match and whose cache key is the bundled whitelist's.

Usage: scripts/check-wheel.py WHEEL [--api-version N] [--moss-version V]
(defaults read from include/moss/Runtime/moss_runtime.h and CMakeLists.txt).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import struct
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "moss_kernels"
BUNDLE = f"{PACKAGE}/_bundled"


def header_api_version() -> int:
    text = (ROOT / "include/moss/Runtime/moss_runtime.h").read_text()
    return int(re.search(r"^#define MOSS_RUNTIME_API_VERSION (\d+)$", text, re.M).group(1))


def cmake_version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"^project\(moss VERSION ([0-9.]+)", text, re.M).group(1)


def elf_soname(data: bytes) -> str | None:
    """DT_SONAME of a 64-bit little-endian ELF shared object."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != 6:  # SHT_DYNAMIC
            continue
        strtab = sections[link]
        for at in range(offset, offset + size, entsize):
            tag, value = struct.unpack_from("<qQ", data, at)
            if tag == 14:  # DT_SONAME
                start = strtab[4] + value
                return data[start:data.index(b"\0", start)].decode()
    return None


def cache_key(whitelist: bytes, version: str, chip: str, pipeline: str) -> str:
    """moss::config::computeCacheKey (docs/kernel-abi.md, "Cache key")."""
    return hashlib.sha256(b"\0".join([whitelist, version.encode(), chip.encode(), pipeline.encode()])).hexdigest()


def check(wheel: Path, api_version: int, moss_version: str) -> list[str]:
    problems = []
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for module in ("__init__", "_capi", "_version", "ops", "runtime"):
            if f"{PACKAGE}/{module}.py" not in names:
                problems.append(f"{PACKAGE}/{module}.py is missing")
        version = re.search(r'__version__ = "([^"]+)"', archive.read(f"{PACKAGE}/_version.py").decode()).group(1)
        if version != moss_version:
            problems.append(f"{PACKAGE}.__version__ {version} is not MOSS_VERSION {moss_version}")
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = archive.read(metadata).decode()
        if f"Version: {moss_version}" not in meta or not re.search(r"^Requires-Dist: torch", meta, re.M):
            problems.append(f"{metadata}: no Version {moss_version} or no Requires-Dist on torch")

        library = f"{BUNDLE}/lib/libmoss_runtime.so"
        if library not in names:
            problems.append(f"{library} is missing")
        else:
            soname = elf_soname(archive.read(library))
            if soname != f"libmoss_runtime.so.{api_version}":
                problems.append(f"{library}: SONAME {soname}, expected libmoss_runtime.so.{api_version}")

        manifests = sorted(n for n in names if re.fullmatch(rf"{BUNDLE}/kernels/[^/]+/manifest\.json", n))
        if not manifests:
            problems.append(f"no {BUNDLE}/kernels/*/manifest.json")
        for manifest_name in manifests:
            folder = manifest_name.rsplit("/", 1)[0]
            name = folder.rsplit("/", 1)[1]
            manifest = json.loads(archive.read(manifest_name))
            whitelist_name = f"{BUNDLE}/whitelists/{name}.json"
            if whitelist_name not in names:
                problems.append(f"{folder}: no whitelist {whitelist_name}")
                continue
            whitelist = archive.read(whitelist_name)
            key = cache_key(whitelist, moss_version, manifest["chip"], manifest["pipeline"])
            if manifest["cache_key"] != key or manifest["whitelist_sha256"] != hashlib.sha256(whitelist).hexdigest():
                problems.append(f"{manifest_name}: cache key or whitelist digest is not {whitelist_name}'s")
            for kernel in manifest["gemm_kernels"] + manifest["attention_kernels"]:
                for field in ("cubin", "ptx"):
                    if f"{folder}/{kernel[field]}" not in names:
                        problems.append(f"{folder}/{kernel[field]} ({kernel['name']}) is missing")
                cubin = f"{folder}/{kernel['cubin']}"
                if cubin in names and hashlib.sha256(archive.read(cubin)).hexdigest() != kernel["cubin_sha256"]:
                    problems.append(f"{cubin}: sha256 differs from the manifest's")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--api-version", type=int, default=None)
    parser.add_argument("--moss-version", default=None)
    args = parser.parse_args()
    problems = check(args.wheel, args.api_version or header_api_version(), args.moss_version or cmake_version())
    for problem in problems:
        print(f"check-wheel: {args.wheel.name}: {problem}", file=sys.stderr)
    if not problems:
        print(f"check-wheel: {args.wheel.name}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
