"""Times one streaming decoder-layer step, moss vs the PyTorch reference.

For each layer case (moss_kernels.streaming.CASES) and B in {1, 4}: one
steady chunk (T = the case's steady chunk length, every frame live) over a
full ring (every slot holds history, so attention reads all S keys). The
moss layer (attention's mask from the ring's positions), the moss layer
with a bool mask built per step, and the reference share weights and run
in the same process, one after the other:
  eager       Python dispatch included: median of 5 samples of 50 steps;
  cuda graph  one step captured per layer: median of 5 samples of 50 replays.
CUDA events, µs per step. Writes layer-step.json and layer-step.md to --out.

Usage: python3 python/benchmarks/layer_step.py --out DIR [--commit SHA]
(environment as for the ops: MOSS_RUNTIME_LIB, MOSS_KERNELS_DIR,
MOSS_CODEC_GEMM_CONFIG). Each case runs in a fresh process of this script.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import moss_kernels  # noqa: E402
from moss_kernels import Epilogue  # noqa: E402
from moss_kernels.decoder_layer import (  # noqa: E402
    DecoderLayerParams, MossKernels, MossMaskKernels, ReferenceKernels, StreamingDecoderLayer)
from moss_kernels.streaming import CASES, LayerCase  # noqa: E402

BATCHES = (1, 4)
WARMUPS, STEPS, SAMPLES = 3, 50, 5


def fill_ring(layer: StreamingDecoderLayer, start: int, gen: torch.Generator) -> None:
    """Every slot holds one of the `capacity` frames before `start`."""
    cache = layer.cache
    history = torch.arange(start - cache.capacity, start, device=cache.k.device)
    cache.slot_positions[:, history % cache.capacity] = history
    cache.k.normal_(generator=gen)
    cache.v.normal_(generator=gen)


def microseconds_per_call(call: Callable[[], object]) -> float:
    for _ in range(WARMUPS):
        call()
    samples = []
    for _ in range(SAMPLES):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(STEPS):
            call()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / STEPS)
    return statistics.median(samples)


def captured(step: Callable[[], object], side: torch.cuda.Stream) -> Callable[[], None]:
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        step()
    return graph.replay


def time_case(case: LayerCase, batch: int, device: torch.device, side: torch.cuda.Stream) -> dict:
    gen = torch.Generator(device=device).manual_seed(0)
    params = DecoderLayerParams.synthetic(case.d_model, case.num_heads, case.ffn_dim, device)
    length = case.steady_chunk
    start = 3 * case.capacity
    x = torch.randn(batch, length, case.d_model, device=device, generator=gen).to(torch.bfloat16)
    positions = (start + torch.arange(length, device=device)).repeat(batch, 1)
    live = torch.ones(batch, length, device=device, dtype=torch.bool)
    m = batch * length
    record = {
        "case": case.name, "batch": batch, "T": length, "S": case.capacity, "d_model": case.d_model,
        "heads": case.num_heads, "ffn_dim": case.ffn_dim, "M": m,
        "gelu_gemm": "generated" if moss_kernels.gemm_is_selected(
            m, case.ffn_dim, case.d_model, Epilogue.GELU, device) else "fallback",
        "layerscale_gemm": "generated" if moss_kernels.gemm_is_selected(
            m, case.d_model, case.ffn_dim, Epilogue.LAYERSCALE_RESIDUAL, device) else "fallback",
        "eager_us": {}, "graph_us": {},
    }
    for kernels in (MossKernels(), MossMaskKernels(), ReferenceKernels()):
        layer = StreamingDecoderLayer(params, batch, case.capacity, kernels)
        fill_ring(layer, start, gen)
        step = lambda: layer(x, positions, live)  # noqa: E731
        with torch.no_grad():
            record["eager_us"][kernels.name] = microseconds_per_call(step)
            record["graph_us"][kernels.name] = microseconds_per_call(captured(step, side))
    return record


def markdown(result: dict) -> str:
    lines = [
        f"# Decoder-layer step, moss vs PyTorch reference — {result['gpu']}, {result['date']}",
        "",
        f"Commit `{result['commit']}`, torch {result['torch']} (CUDA {result['cuda']}), kernels "
        f"`{result['kernels_dir']}`, whitelist `{result['whitelist']}`.",
        f"{result['protocol']}",
        "",
        "| layer | B | T | S | FFN GEMMs (gelu / layerscale) | graph moss | graph moss, bool mask "
        "| graph reference | speed-up | eager moss | eager reference |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["cases"]:
        g, e = r["graph_us"], r["eager_us"]
        lines.append(
            f"| {r['case']} (d {r['d_model']}, {r['heads']} heads) | {r['batch']} | {r['T']} | {r['S']} "
            f"| {r['gelu_gemm']} / {r['layerscale_gemm']} | {g['moss']:.1f} | {g['moss-mask']:.1f} "
            f"| {g['reference']:.1f} "
            f"| {g['reference'] / g['moss']:.2f}x | {e['moss']:.1f} | {e['reference']:.1f} |")
    return "\n".join(lines) + "\n"


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def time_in_fresh_process(case: str, batch: int) -> dict:
    """One case per process: no case inherits another's allocator,
    workspace or compile state."""
    done = subprocess.run([sys.executable, __file__, "--one", f"{case}:{batch}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{case} B={batch} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def time_one(spec: str) -> None:
    name, batch = spec.split(":")
    device = torch.device("cuda", 0)
    moss_kernels.load_runtime(device)
    side = torch.cuda.Stream(device)  # every capture of this process
    print(json.dumps(time_case(CASES[name], int(batch), device, side)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--commit", default=None)
    parser.add_argument("--one", metavar="CASE:B", help="time one case and print its record (internal)")
    args = parser.parse_args()
    if args.one:
        return time_one(args.one)
    if args.out is None:
        parser.error("--out is required")
    device = torch.device("cuda", 0)
    result = {
        "gpu": torch.cuda.get_device_name(device),
        "date": datetime.date.today().isoformat(),
        "commit": args.commit or git_commit(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "kernels_dir": os.environ.get("MOSS_KERNELS_DIR"),
        "whitelist": os.environ.get("MOSS_CODEC_GEMM_CONFIG"),
        "protocol": (f"µs per layer step (CUDA events): {WARMUPS} warm-ups, median of {SAMPLES} samples of "
                     f"{STEPS} steps; steady chunk, every frame live, full ring; 'graph' replays one "
                     "captured step, 'eager' includes Python dispatch; each case in a fresh process."),
        "cases": [time_in_fresh_process(name, batch) for name in CASES for batch in BATCHES],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "layer-step.json").write_text(json.dumps(result, indent=2) + "\n")
    text = markdown(result)
    (args.out / "layer-step.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
