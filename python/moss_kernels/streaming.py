"""The streaming decoder-layer check: ten chunks through the reference layer
and the moss layer side by side, eager, under CUDA graphs, or under
torch.compile(dynamic=True).

The chunk plan is built on the host: a first chunk, then steady chunks long
enough to wrap the ring; one batch row's stream ends (its last frame is
padding) and a new stream reuses the released slot; with B >= 3 a row joins
late, and with B >= 4 the last row is idle (all padding).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import torch
from torch import Tensor

from .decoder_layer import DecoderLayerParams, MossFusedKernels, ReferenceKernels, StreamingDecoderLayer

MODES = ("eager", "cuda_graph", "compile")


@dataclass(frozen=True)
class LayerCase:
    name: str
    d_model: int
    num_heads: int
    ffn_dim: int
    capacity: int  # ring slots S
    first_chunk: int  # frames of the first chunk
    steady_chunk: int  # frames of every later chunk


# Chunk lengths avoid every other tensor size of the layer, so Dynamo's
# duck sizing cannot tie T to H, S or D and recompile when T changes.
STAGE2 = LayerCase("stage2", d_model=768, num_heads=12, ffn_dim=3072, capacity=250, first_chunk=56, steady_chunk=32)
STAGE1 = LayerCase("stage1", d_model=1280, num_heads=20, ffn_dim=5120, capacity=125, first_chunk=24, steady_chunk=16)
CASES = {case.name: case for case in (STAGE2, STAGE1)}


# ------------------------------------------------------------ chunk plan ---


@dataclass(frozen=True)
class StreamSpan:
    """A stream in batch row `row`, live from chunk `first` through `last`;
    its final `tail_padding` frames of chunk `last` are padding."""

    row: int
    first: int
    last: int
    tail_padding: int = 0


@dataclass(frozen=True)
class ChunkPlan:
    index: int
    positions: Tensor  # [B,T] int64, absolute per stream
    live: Tensor  # [B,T] bool, False for padding frames
    released_rows: tuple[int, ...]  # release these rows' slots before the chunk

    @property
    def length(self) -> int:
        return self.positions.shape[1]


def default_spans(batch: int, chunks: int = 10, recycle_before: int = 8) -> list[StreamSpan]:
    """The recycled row (0 for B = 1, else 1) ends one frame short in chunk
    recycle_before - 1 and gets a new stream from chunk recycle_before."""
    recycled = 0 if batch == 1 else 1
    spans = [StreamSpan(recycled, 0, recycle_before - 1, tail_padding=1),
             StreamSpan(recycled, recycle_before, chunks - 1)]
    idle_row = batch - 1 if batch >= 4 else None
    for row in range(batch):
        if row == recycled or row == idle_row:
            continue
        spans.append(StreamSpan(row, 3 if row == 2 else 0, chunks - 1))
    return spans


def plan_chunks(batch: int, first_len: int, steady_len: int, spans: Sequence[StreamSpan],
                chunks: int = 10) -> list[ChunkPlan]:
    next_position = [0] * batch
    plans = []
    for index in range(chunks):
        length = first_len if index == 0 else steady_len
        released = tuple(sorted({s.row for s in spans if s.last == index - 1}))
        for row in released:
            next_position[row] = 0
        positions = torch.zeros(batch, length, dtype=torch.int64)
        live = torch.zeros(batch, length, dtype=torch.bool)
        for row in range(batch):
            positions[row] = next_position[row] + torch.arange(length)
            span = next((s for s in spans if s.row == row and s.first <= index <= s.last), None)
            if span is None:
                continue  # idle row: padding frames, positions left at 0..T-1
            live[row] = True
            if index == span.last and span.tail_padding:
                live[row, length - span.tail_padding:] = False
            next_position[row] += length
        plans.append(ChunkPlan(index, positions, live, released))
    return plans


def chunk_input(plan: ChunkPlan, d_model: int, gen: torch.Generator, device: torch.device) -> Tensor:
    """Unit-normal frames, zeros at padding frames."""
    x = torch.randn(plan.live.shape[0], plan.length, d_model, generator=gen)
    return (x * plan.live[..., None]).to(device=device, dtype=torch.bfloat16)


# --------------------------------------------------------------- runners ---


class EagerRunner:
    def __init__(self, layer: StreamingDecoderLayer):
        self.layer = layer
        self.compilations: Optional[int] = None

    def __call__(self, x: Tensor, positions: Tensor, live: Tensor) -> Tensor:
        return self.layer(x, positions, live)


class CompiledRunner:
    """torch.compile(fullgraph=True, dynamic=True); counts the graphs Dynamo
    hands to the backend (a recompilation adds one)."""

    def __init__(self, layer: StreamingDecoderLayer):
        from torch._dynamo.testing import CompileCounterWithBackend

        torch._dynamo.reset()
        self.counter = CompileCounterWithBackend("inductor")
        self.step = torch.compile(layer, backend=self.counter, fullgraph=True, dynamic=True)

    @property
    def compilations(self) -> int:
        return self.counter.frame_count

    def __call__(self, x: Tensor, positions: Tensor, live: Tensor) -> Tensor:
        return self.step(x, positions, live)


_capture_streams: dict[torch.device, torch.cuda.Stream] = {}


def _capture_stream(device: torch.device) -> torch.cuda.Stream:
    # One side stream per device for every capture: the runtime binds a
    # (cuBLASLt) workspace slot to each stream it sees, and has only a few.
    if device not in _capture_streams:
        _capture_streams[device] = torch.cuda.Stream(device)
    return _capture_streams[device]


class GraphRunner:
    """One CUDA graph per chunk length, captured up front on an empty cache
    (warm-up steps write their padding frames into it) and replayed with
    each chunk copied into the graph's static inputs."""

    def __init__(self, layer: StreamingDecoderLayer, lengths: Sequence[int], batch: int, d_model: int):
        self.layer = layer
        self.compilations: Optional[int] = None
        device = layer.cache.k.device
        self.stream = _capture_stream(device)
        self.graphs: dict[int, tuple[torch.cuda.CUDAGraph, tuple[Tensor, Tensor, Tensor], Tensor]] = {}
        for length in sorted(set(lengths)):
            inputs = (torch.zeros(batch, length, d_model, device=device, dtype=torch.bfloat16),
                      torch.arange(length, device=device).repeat(batch, 1),
                      torch.zeros(batch, length, device=device, dtype=torch.bool))
            self.stream.wait_stream(torch.cuda.current_stream(device))
            with torch.cuda.stream(self.stream):
                for _ in range(2):  # runtime, cuBLAS plans and allocator warm before capture
                    layer(*inputs)
            torch.cuda.current_stream(device).wait_stream(self.stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=self.stream):
                output = layer(*inputs)
            self.graphs[length] = (graph, inputs, output)
        layer.cache.reset()

    def __call__(self, x: Tensor, positions: Tensor, live: Tensor) -> Tensor:
        graph, (static_x, static_positions, static_live), output = self.graphs[x.shape[1]]
        static_x.copy_(x)
        static_positions.copy_(positions)
        static_live.copy_(live)
        graph.replay()
        return output.clone()


def make_runner(mode: str, layer: StreamingDecoderLayer, case: LayerCase, batch: int) -> Callable:
    if mode == "eager":
        return EagerRunner(layer)
    if mode == "compile":
        return CompiledRunner(layer)
    if mode == "cuda_graph":
        return GraphRunner(layer, (case.first_chunk, case.steady_chunk), batch, case.d_model)
    raise ValueError(f"mode must be one of {MODES}, got {mode!r}")


# ----------------------------------------------------------------- check ---


def relative_rms(actual: Tensor, expected: Tensor) -> float:
    diff = (actual.float() - expected.float()).pow(2).mean().sqrt()
    return (diff / expected.float().pow(2).mean().sqrt().clamp_min(1e-30)).item()


@dataclass
class ChunkResult:
    index: int
    length: int
    rel_rms: float  # layer output, live frames, moss vs reference
    branch_rel_rms: float  # y - x: both residual branches without the skip
    padding_frames: int
    padding_exact_zero: bool  # every padding frame's output is exactly 0
    compilations: Optional[int]  # backend compilations so far (compile mode)


@dataclass
class StreamingReport:
    case: str
    batch: int
    mode: str
    chunks: list[ChunkResult]
    compilations: Optional[int]  # backend compilations in all (compile mode)

    @property
    def max_rel_rms(self) -> float:
        return max(c.rel_rms for c in self.chunks)

    def to_json(self) -> dict:
        return dataclasses.asdict(self) | {"max_rel_rms": self.max_rel_rms}


def run_streaming_check(case: LayerCase, batch: int, mode: str, device: torch.device,
                        chunks: int = 10, seed: int = 0) -> StreamingReport:
    params = DecoderLayerParams.synthetic(case.d_model, case.num_heads, case.ffn_dim, device, seed=seed)
    reference = StreamingDecoderLayer(params, batch, case.capacity, ReferenceKernels())
    moss = StreamingDecoderLayer(params, batch, case.capacity, MossFusedKernels())
    plans = plan_chunks(batch, case.first_chunk, case.steady_chunk, default_spans(batch, chunks), chunks)
    gen = torch.Generator().manual_seed(seed + 1)
    results = []
    with torch.no_grad():
        runner = make_runner(mode, moss, case, batch)
        for plan in plans:
            for row in plan.released_rows:
                reference.cache.release(row)
                moss.cache.release(row)
            x = chunk_input(plan, case.d_model, gen, device)
            positions, live = plan.positions.to(device), plan.live.to(device)
            expected = reference(x, positions, live)
            actual = runner(x, positions, live)
            padding = ~live
            results.append(ChunkResult(
                index=plan.index,
                length=plan.length,
                rel_rms=relative_rms(actual[live], expected[live]),
                branch_rel_rms=relative_rms((actual - x)[live], (expected - x)[live]),
                padding_frames=int(padding.sum()),
                padding_exact_zero=bool((actual[padding] == 0).all()),
                compilations=runner.compilations,
            ))
    return StreamingReport(case.name, batch, mode, results, runner.compilations)
