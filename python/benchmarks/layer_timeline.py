"""The kernels of one decoder-layer step, in order, with their GPU time.

Profiles one eager step of a layer (decoder_layer.MossFusedKernels,
MossKernels or the reference) after warm-up and lists every kernel it launched with its device
time: where a layer step's time goes, beside layer_step.py's totals.

Usage: python3 python/benchmarks/layer_timeline.py --out DIR
       [--case stage2] [--batch 1] [--length 1] [--layer moss-fused|moss|reference]
(environment as for the ops: MOSS_RUNTIME_LIB, MOSS_KERNELS_DIR,
MOSS_CODEC_GEMM_CONFIG). Writes layer-timeline-<layer>-<case>-b<B>-t<T>.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import moss_kernels  # noqa: E402
from moss_kernels.decoder_layer import (  # noqa: E402
    DecoderLayerParams, MossFusedKernels, MossKernels, ReferenceKernels, StreamingDecoderLayer)
from moss_kernels.streaming import CASES  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from layer_step import fill_ring  # noqa: E402


LAYERS = {"moss-fused": MossFusedKernels, "moss": MossKernels, "reference": ReferenceKernels}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--case", default="stage2", choices=list(CASES))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--length", type=int, default=1)
    parser.add_argument("--layer", default="moss-fused", choices=tuple(LAYERS))
    args = parser.parse_args()
    device = torch.device("cuda", 0)
    moss_kernels.load_runtime(device)
    case = CASES[args.case]
    gen = torch.Generator(device=device).manual_seed(0)
    params = DecoderLayerParams.synthetic(case.d_model, case.num_heads, case.ffn_dim, device)
    kernels = LAYERS[args.layer]()
    layer = StreamingDecoderLayer(params, args.batch, case.capacity, kernels)
    start = 3 * case.capacity
    fill_ring(layer, start, gen)
    x = torch.randn(args.batch, args.length, case.d_model, device=device, generator=gen).to(torch.bfloat16)
    positions = (start + torch.arange(args.length, device=device)).repeat(args.batch, 1)
    live = torch.ones(args.batch, args.length, device=device, dtype=torch.bool)
    with torch.no_grad():
        for _ in range(3):
            layer(x, positions, live)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            layer(x, positions, live)
            torch.cuda.synchronize()
    kernels_run = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                         key=lambda e: e.time_range.start)
    total = sum(e.device_time for e in kernels_run)
    lines = [f"# One {args.layer} layer step: {args.case} B={args.batch} T={args.length}, "
             f"{torch.cuda.get_device_name(device)}", "",
             f"{len(kernels_run)} kernels, {total:.1f} µs of kernel time (eager: launch gaps not included).", "",
             "| # | kernel | µs |", "|---|---|---|"]
    for i, e in enumerate(kernels_run):
        lines.append(f"| {i} | `{e.name[:90]}` | {e.device_time:.1f} |")
    text = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"layer-timeline-{args.layer}-{args.case}-b{args.batch}-t{args.length}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
