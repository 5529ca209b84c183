"""Times one streaming decoder-layer step, moss vs the PyTorch reference.

For each layer case (moss_kernels.streaming.CASES) and (B, T) of STEPS_OF: one
chunk of T frames, every frame live, over a full ring (every slot holds
history, so attention reads all S keys). The layers share weights and run in
the same process, one after the other:
  moss-fused  five moss calls (decoder_layer.MossFusedKernels: LayerNorm+
              QKV+RoPE+ring write, attention from positions, out-proj+
              LayerScale+residual, LayerNorm+FFN1+GELU, FFN2+LayerScale+
              residual);
  moss        the same with RoPE and the ring write in PyTorch
              (decoder_layer.MossKernels);
  moss-ffn    attention and the FFN GEMMs on moss, the rest PyTorch's;
  reference   PyTorch as the codec runs it.
Each is timed as one step captured in a CUDA graph (median of 5 samples of 50
replays) and, for moss-fused and the reference, as one step under
torch.compile(dynamic=False) captured in a CUDA graph (what a serving engine
runs). Beside them the step's floors on this card: bytes (weights, the KV the
attention reads and writes, x in and out) over the measured HBM copy rate,
and the launch floor (kernels of the fused step x 0.7 µs). CUDA events, µs
per step. Writes layer-step.json and layer-step.md to --out.

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
    DecoderLayerParams, MossFfnKernels, MossFusedKernels, MossKernels, ReferenceKernels, StreamingDecoderLayer)
from moss_kernels.streaming import CASES, LayerCase  # noqa: E402

# (B, T) per case: the first chunk (T = 1) and steady chunks of 15 frames
# (16 at stage 1, 32 at stage 2 as the streaming check's plan), from one
# stream to a 16-stream batch.
STEPS_OF = {"stage2": ((1, 1), (4, 1), (1, 15), (4, 15), (16, 15), (1, 32)),
            "stage1": ((1, 1), (4, 1), (1, 15), (16, 15))}
WARMUPS, STEPS, SAMPLES = 3, 50, 5
LAUNCH_US = 0.7  # one in-graph kernel launch (docs/performance.md)
MOSS_STEP_KERNELS = 5  # the fused step's moss calls
COMPILED = ("moss-fused", "reference")  # the layers also timed under torch.compile


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


def hbm_bytes_per_us(device: torch.device) -> float:
    """Device-to-device copy rate of 1 GiB (read + write bytes), per µs."""
    src = torch.empty(1 << 29, dtype=torch.int16, device=device)
    dst = torch.empty_like(src)
    us = microseconds_per_call(lambda: dst.copy_(src))
    return 2 * src.numel() * 2 / us


def step_bytes(case: LayerCase, batch: int, length: int) -> int:
    """What one step must move at least: the weights (QKV, out, FFN), the ring
    the attention reads (k and v of every slot), the k and v it writes, and
    x in and out."""
    d, f = case.d_model, case.ffn_dim
    weights = (3 * d * d + d * d + 2 * d * f + 4 * d) * 2
    ring = 2 * batch * case.capacity * d * 2
    written = 2 * batch * length * d * 2
    activations = 2 * batch * length * d * 2
    return weights + ring + written + activations


def time_case(case: LayerCase, batch: int, length: int, device: torch.device,
              side: torch.cuda.Stream) -> dict:
    gen = torch.Generator(device=device).manual_seed(0)
    params = DecoderLayerParams.synthetic(case.d_model, case.num_heads, case.ffn_dim, device)
    start = 3 * case.capacity
    x = torch.randn(batch, length, case.d_model, device=device, generator=gen).to(torch.bfloat16)
    positions = (start + torch.arange(length, device=device)).repeat(batch, 1)
    live = torch.ones(batch, length, device=device, dtype=torch.bool)
    m = batch * length
    d, f = case.d_model, case.ffn_dim

    def path(selected: bool) -> str:
        return "generated" if selected else "fallback"

    record = {
        "case": case.name, "batch": batch, "T": length, "S": case.capacity, "d_model": d,
        "heads": case.num_heads, "ffn_dim": f, "M": m,
        # The step's five GEMMs: generated or the cuBLASLt fallback.
        "gemms": {
            "qkv": path(moss_kernels.qkv_rope_cache_is_selected(batch, length, d, device)),
            "out": path(moss_kernels.gemm_is_selected(m, d, d, Epilogue.LAYERSCALE_RESIDUAL, device)),
            "ffn1": path(moss_kernels.layernorm_gemm_is_selected(m, f, d, Epilogue.GELU, device)),
            "ffn2": path(moss_kernels.gemm_is_selected(m, d, f, Epilogue.LAYERSCALE_RESIDUAL, device)),
        },
        "bytes": step_bytes(case, batch, length),
        "graph_us": {}, "compiled_graph_us": {},
    }
    for kernels in (MossFusedKernels(), MossKernels(), MossFfnKernels(), ReferenceKernels()):
        layer = StreamingDecoderLayer(params, batch, case.capacity, kernels)
        fill_ring(layer, start, gen)
        with torch.no_grad():
            record["graph_us"][kernels.name] = microseconds_per_call(
                captured(lambda: layer(x, positions, live), side))
            if kernels.name in COMPILED:
                compiled = torch.compile(layer, dynamic=False)
                record["compiled_graph_us"][kernels.name] = microseconds_per_call(
                    captured(lambda: compiled(x, positions, live), side))
    return record


def markdown(result: dict) -> str:
    rate = result["hbm_bytes_per_us"]
    lines = [
        f"# Decoder-layer step, moss vs PyTorch reference — {result['gpu']}, {result['date']}",
        "",
        f"Commit `{result['commit']}`, torch {result['torch']} (CUDA {result['cuda']}), kernels "
        f"`{result['kernels_dir']}`, whitelist `{result['whitelist']}`. HBM copy rate "
        f"{rate / 1e6:.2f} TB/s.",
        f"{result['protocol']}",
        "",
        "| layer | B | T | GEMMs qkv / out / ffn1 / ffn2 | bytes floor | launch floor | moss-fused | moss "
        "| moss-ffn "
        "| reference | fused compiled | reference compiled | vs compiled reference | fused / floor |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["cases"]:
        g, c = r["graph_us"], r["compiled_graph_us"]
        floor = r["bytes"] / rate
        best = min(g["moss-fused"], c["moss-fused"])
        gemms = " / ".join(r["gemms"][k][0] for k in ("qkv", "out", "ffn1", "ffn2"))
        lines.append(
            f"| {r['case']} (d {r['d_model']}, S {r['S']}) | {r['batch']} | {r['T']} | {gemms} "
            f"| {floor:.1f} | {MOSS_STEP_KERNELS * LAUNCH_US:.1f} | {g['moss-fused']:.1f} | {g['moss']:.1f} "
            f"| {g['moss-ffn']:.1f} | {g['reference']:.1f} | {c['moss-fused']:.1f} | {c['reference']:.1f} "
            f"| {c['reference'] / best:.2f}x | {best / max(floor, MOSS_STEP_KERNELS * LAUNCH_US):.1f}x |")
    lines.append("")
    lines.append("GEMMs: g generated, f the cuBLASLt fallback (with moss's exact prologue and epilogue "
                 "kernels). moss / floor: the better moss time over the larger floor.")
    return "\n".join(lines) + "\n"


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def time_in_fresh_process(case: str, batch: int, length: int) -> dict:
    """One case per process: no case inherits another's allocator,
    workspace or compile state."""
    done = subprocess.run([sys.executable, __file__, "--one", f"{case}:{batch}:{length}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{case} B={batch} T={length} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def time_one(spec: str) -> None:
    name, batch, length = spec.split(":")
    device = torch.device("cuda", 0)
    moss_kernels.load_runtime(device)
    side = torch.cuda.Stream(device)  # every capture of this process
    print(json.dumps(time_case(CASES[name], int(batch), int(length), device, side)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--commit", default=None)
    parser.add_argument("--one", metavar="CASE:B:T", help="time one case and print its record (internal)")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated layer cases (default: all)")
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
        "hbm_bytes_per_us": hbm_bytes_per_us(device),
        "protocol": (f"µs per layer step (CUDA events): {WARMUPS} warm-ups, median of {SAMPLES} samples of "
                     f"{STEPS} replays of one step captured in a CUDA graph; 'compiled': the step under "
                     "torch.compile(dynamic=False), captured; every frame live, full ring; each case in a "
                     "fresh process."),
        "cases": [],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    # Written after every case: a run cut short keeps what it measured.
    for name in args.cases.split(","):
        for batch, length in STEPS_OF[name]:
            result["cases"].append(time_in_fresh_process(name, batch, length))
            (args.out / "layer-step.json").write_text(json.dumps(result, indent=2) + "\n")
            (args.out / "layer-step.md").write_text(markdown(result))
            print(markdown(result).splitlines()[-3], flush=True)
    print(markdown(result))


if __name__ == "__main__":
    main()
