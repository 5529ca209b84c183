"""Times one streaming decoder-layer step, moss vs the PyTorch reference.

For each layer case (moss_kernels.streaming.CASES) and (B, T) of the grid:
one chunk of T frames, every frame live, over a full ring (every slot holds
history, so attention reads all S keys). The layers share weights and run in
the same process, one after the other:
  moss-fused  five moss calls (decoder_layer.MossFusedKernels: LayerNorm+
              QKV+RoPE+ring write, attention from positions, out-proj+
              LayerScale+residual, LayerNorm+FFN1+GELU, FFN2+LayerScale+
              residual);
  moss        the same with RoPE and the ring write in PyTorch
              (decoder_layer.MossKernels);
  moss-ffn    the layer before the fused kernels: attention and the FFN's
              two GEMMs on moss (three ops), the rest PyTorch's;
  reference   PyTorch as the codec runs it.
A CUDA graph holds 8 layer steps, chained as a decoder stage chains its
layers. Hot: the same layer 8 times, so its weights and ring stay in L2.
Cold: 24 layers, each with its own copy of the weights and its own ring,
in three graphs replayed in turn, so every step reads its weights from HBM
as a real 12- or 32-layer stage does. Each layer is timed as captured eager
ops and, for moss-fused and the reference, under torch.compile(dynamic=
False) captured the same way (what a serving engine runs), by default with
cold weights only (--compiled-weights). Beside them the
step's floors on this card: bytes (weights, the KV the attention reads and
writes, x in and out) over the measured HBM copy rate (cold) or L2 copy
rate (hot), and the launch floor (kernels of the fused step x 0.7 µs).
CUDA events, µs per step. Writes layer-step.json and layer-step.md to --out.

Usage: python3 python/benchmarks/layer_step.py --out DIR [--commit SHA]
         [--cases stage2,stage1] [--batches 1,4,16,64] [--lengths 1,15,32]
         [--compiled-weights cold | hot,cold]
(environment as for the ops: MOSS_RUNTIME_LIB, MOSS_KERNELS_DIR,
MOSS_CODEC_GEMM_CONFIG). Each case runs in a fresh process of this script.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import moss_kernels  # noqa: E402
from moss_kernels import Epilogue  # noqa: E402
from moss_kernels.decoder_layer import (  # noqa: E402
    DecoderLayerParams, MossFfnKernels, MossFusedKernels, MossKernels, ReferenceKernels, StreamingDecoderLayer)
from moss_kernels.streaming import CASES, LayerCase  # noqa: E402

# The grid of issue 43: the first chunk (T = 1), a steady chunk of 15
# frames and one of 32, from one stream to a full 64-stream bucket.
BATCHES, LENGTHS = (1, 4, 16, 64), (1, 15, 32)
WARMUPS, REPLAYS, SAMPLES = 3, 20, 5
STEPS_PER_GRAPH = 8  # layer steps captured in one graph
ROTATED = 24  # layers (weights and ring) the cold timing rotates through
LAUNCH_US = 0.7  # one in-graph kernel launch (docs/performance.md)
MOSS_STEP_KERNELS = 5  # the fused step's moss calls
LAYERS = (MossFusedKernels, MossKernels, MossFfnKernels, ReferenceKernels)
COMPILED = ("moss-fused", "reference")  # the layers also timed under torch.compile
WEIGHTS = ("hot", "cold")
# Compiled timings by default only with cold weights, which is how a served
# decoder runs its layers: each compile of an 8-layer stack takes tens of
# seconds, and the hot stack (one layer repeated) needs its own.
COMPILED_WEIGHTS = ("cold",)


class LayerStack(nn.Module):
    """Layers run one after the other, each on the one before's output, as
    a decoder stage runs them."""

    def __init__(self, layers: Sequence[StreamingDecoderLayer]):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, live: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, positions, live)
        return x


def fill_ring(layer: StreamingDecoderLayer, start: int, gen: torch.Generator) -> None:
    """Every slot holds one of the `capacity` frames before `start`."""
    cache = layer.cache
    history = torch.arange(start - cache.capacity, start, device=cache.k.device)
    cache.slot_positions[:, history % cache.capacity] = history
    cache.k.normal_(generator=gen)
    cache.v.normal_(generator=gen)


def microseconds_per_step(replays: Sequence[Callable[[], object]], steps_per_replay: int) -> float:
    """Median of SAMPLES samples of REPLAYS replays, taken from `replays` in
    turn, per layer step."""
    for replay in replays:
        for _ in range(WARMUPS):
            replay()
    samples = []
    for _ in range(SAMPLES):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(REPLAYS):
            replays[i % len(replays)]()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / (REPLAYS * steps_per_replay))
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


def copy_bytes_per_us(size: int, device: torch.device, side: torch.cuda.Stream) -> float:
    """Device-to-device copy rate of `size` bytes (read + write), per µs,
    from copies captured in a graph (a small copy launched eagerly would
    time the launch)."""
    src = torch.empty(size // 2, dtype=torch.int16, device=device)
    dst = torch.empty_like(src)

    def copies() -> None:
        for _ in range(STEPS_PER_GRAPH):
            dst.copy_(src)

    return 2 * size / microseconds_per_step([captured(copies, side)], STEPS_PER_GRAPH)


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
              side: torch.cuda.Stream, compiled_weights: Sequence[str] = COMPILED_WEIGHTS) -> dict:
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
        # The step's GEMMs: generated or the cuBLASLt fallback.
        "gemms": {
            "qkv": path(moss_kernels.qkv_rope_cache_is_selected(batch, length, d, device)),
            "out": path(moss_kernels.gemm_is_selected(m, d, d, Epilogue.LAYERSCALE_RESIDUAL, device)),
            "ffn1": path(moss_kernels.layernorm_gemm_is_selected(m, f, d, Epilogue.GELU, device)),
            "ffn2": path(moss_kernels.gemm_is_selected(m, d, f, Epilogue.LAYERSCALE_RESIDUAL, device)),
        },
        "bytes": step_bytes(case, batch, length),
        "graph_us": {w: {} for w in WEIGHTS}, "compiled_graph_us": {w: {} for w in WEIGHTS},
    }
    for kernels_of in LAYERS:
        kernels = kernels_of()
        layers = [StreamingDecoderLayer(copy.deepcopy(params), batch, case.capacity, kernels)
                  for _ in range(ROTATED)]
        for layer in layers:
            fill_ring(layer, start, gen)
        stacks = {"hot": [LayerStack([layers[0]] * STEPS_PER_GRAPH)],
                  "cold": [LayerStack(layers[i:i + STEPS_PER_GRAPH]) for i in range(0, ROTATED, STEPS_PER_GRAPH)]}
        with torch.no_grad():
            for weights, group in stacks.items():
                record["graph_us"][weights][kernels.name] = microseconds_per_step(
                    [captured(lambda s=s: s(x, positions, live), side) for s in group], STEPS_PER_GRAPH)
                if kernels.name in COMPILED and weights in compiled_weights:
                    compiled = [torch.compile(s, dynamic=False) for s in group]
                    record["compiled_graph_us"][weights][kernels.name] = microseconds_per_step(
                        [captured(lambda c=c: c(x, positions, live), side) for c in compiled], STEPS_PER_GRAPH)
        del layers, stacks
        torch.cuda.empty_cache()
    return record


def markdown(result: dict) -> str:
    rates = {"cold": result["hbm_bytes_per_us"], "hot": result["l2_bytes_per_us"]}
    lines = [
        f"# Decoder-layer step, moss vs PyTorch reference — {result['gpu']}, {result['date']}",
        "",
        f"Commit `{result['commit']}`, torch {result['torch']} (CUDA {result['cuda']}), kernels "
        f"`{result['kernels_dir']}`, whitelist `{result['whitelist']}`. Copy rates: HBM "
        f"{rates['cold'] / 1e6:.2f} TB/s, L2 {rates['hot'] / 1e6:.2f} TB/s.",
        f"{result['protocol']}",
        "",
        "| layer | B | T | weights | GEMMs qkv / out / ffn1 / ffn2 | bytes floor | launch floor | moss-fused "
        "| moss | moss-ffn | reference | fused compiled | reference compiled | vs compiled reference "
        "| fused / floor |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["cases"]:
        gemms = " / ".join(r["gemms"][k][0] for k in ("qkv", "out", "ffn1", "ffn2"))
        for weights in WEIGHTS:
            g, c = r["graph_us"][weights], r["compiled_graph_us"][weights]
            floor = max(r["bytes"] / rates[weights], MOSS_STEP_KERNELS * LAUNCH_US)
            best = min(g["moss-fused"], c.get("moss-fused", g["moss-fused"]))
            us = lambda t, key: f"{t[key]:.1f}" if key in t else "—"  # noqa: E731
            versus = f"{c['reference'] / best:.2f}x" if "reference" in c else "—"
            lines.append(
                f"| {r['case']} (d {r['d_model']}, S {r['S']}) | {r['batch']} | {r['T']} | {weights} | {gemms} "
                f"| {r['bytes'] / rates[weights]:.1f} | {MOSS_STEP_KERNELS * LAUNCH_US:.1f} "
                f"| {g['moss-fused']:.1f} | {g['moss']:.1f} | {g['moss-ffn']:.1f} | {g['reference']:.1f} "
                f"| {us(c, 'moss-fused')} "
                f"| {us(c, 'reference')} | {versus} | {best / floor:.1f}x |")
    lines.append("")
    lines.append("GEMMs: g generated, f the cuBLASLt fallback (with moss's exact prologue and epilogue "
                 "kernels). Floors in µs; hot bytes over the L2 copy rate, cold over the HBM one. "
                 "fused / floor: the better moss-fused time over the larger floor. —: not compiled with "
                 "these weights (--compiled-weights).")
    return "\n".join(lines) + "\n"


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def time_in_fresh_process(case: str, batch: int, length: int, compiled_weights: str) -> dict:
    """One case per process: no case inherits another's allocator,
    workspace or compile state."""
    done = subprocess.run([sys.executable, __file__, "--one", f"{case}:{batch}:{length}",
                           "--compiled-weights", compiled_weights],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{case} B={batch} T={length} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def time_one(spec: str, compiled_weights: Sequence[str]) -> None:
    name, batch, length = spec.split(":")
    device = torch.device("cuda", 0)
    moss_kernels.load_runtime(device)
    side = torch.cuda.Stream(device)  # every capture of this process
    print(json.dumps(time_case(CASES[name], int(batch), int(length), device, side, compiled_weights)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--commit", default=None)
    parser.add_argument("--one", metavar="CASE:B:T", help="time one case and print its record (internal)")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated layer cases (default: all)")
    parser.add_argument("--compiled-weights", default=",".join(COMPILED_WEIGHTS),
                        help="weights (hot, cold) the compiled layers are timed with")
    parser.add_argument("--batches", default=",".join(map(str, BATCHES)), help="comma-separated B values")
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)), help="comma-separated T values")
    args = parser.parse_args()
    compiled_weights = args.compiled_weights.split(",")
    if not set(compiled_weights) <= set(WEIGHTS):
        parser.error(f"--compiled-weights takes {', '.join(WEIGHTS)}, got {args.compiled_weights}")
    if args.one:
        return time_one(args.one, compiled_weights)
    if args.out is None:
        parser.error("--out is required")
    device = torch.device("cuda", 0)
    side = torch.cuda.Stream(device)
    result = {
        "gpu": torch.cuda.get_device_name(device),
        "date": datetime.date.today().isoformat(),
        "commit": args.commit or git_commit(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "kernels_dir": os.environ.get("MOSS_KERNELS_DIR"),
        "whitelist": os.environ.get("MOSS_CODEC_GEMM_CONFIG"),
        # 1 GiB is far past L2; 16 MiB (source and copy) stays in it.
        "hbm_bytes_per_us": copy_bytes_per_us(1 << 30, device, side),
        "l2_bytes_per_us": copy_bytes_per_us(8 << 20, device, side),
        "protocol": (f"µs per layer step (CUDA events): {WARMUPS} warm-ups, median of {SAMPLES} samples of "
                     f"{REPLAYS} replays of a CUDA graph of {STEPS_PER_GRAPH} chained steps; hot: one layer "
                     f"repeated, cold: {ROTATED} layers with their own weights and rings rotated; "
                     "'compiled': the steps under torch.compile(dynamic=False), captured, with "
                     f"{args.compiled_weights} weights; every frame live, "
                     "full ring; each case in a fresh process."),
        "cases": [],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    # Written after every case: a run cut short keeps what it measured.
    batches = [int(b) for b in args.batches.split(",")]
    lengths = [int(t) for t in args.lengths.split(",")]
    for name in args.cases.split(","):
        for batch, length in [(b, t) for b in batches for t in lengths]:
            result["cases"].append(time_in_fresh_process(name, batch, length, args.compiled_weights))
            (args.out / "layer-step.json").write_text(json.dumps(result, indent=2) + "\n")
            (args.out / "layer-step.md").write_text(markdown(result))
            print("\n".join(markdown(result).splitlines()[-4:-2]), flush=True)
    print(markdown(result))


if __name__ == "__main__":
    main()
