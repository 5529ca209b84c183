"""Ring KV cache of a streaming attention layer, with slot recycling.

Each batch row keeps the keys and values of its stream's last `capacity`
frames; the frame at absolute position p lives in slot p % capacity, and
slot_positions remembers which position each slot holds (-1: empty). The
mask is derived from those positions alone (as a bool [B,1,T,S] tensor by
`mask`, or inside moss's kernel from slot_positions and `query_positions`),
so the ring's wrap and a recycled row (a new stream in a released slot) need
no data movement.
Everything is tensor code on the cache's device: it runs inside CUDA graphs
and torch.compile'd steps; only `release` and `reset` are called between
steps.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class RingKvCache(nn.Module):
    def __init__(self, batch: int, heads: int, capacity: int, head_dim: int,
                 device: torch.device, dtype: torch.dtype = torch.bfloat16):
        super().__init__()
        self.capacity = capacity
        # Zeros, not empty: attention needs finite values even in slots the
        # mask hides (a hidden key gets weight 0, and 0 * NaN is NaN).
        self.register_buffer("k", torch.zeros(batch, heads, capacity, head_dim, device=device, dtype=dtype))
        self.register_buffer("v", torch.zeros(batch, heads, capacity, head_dim, device=device, dtype=dtype))
        self.register_buffer("slot_positions", torch.full((batch, capacity), -1, device=device, dtype=torch.int64))

    def append(self, k: Tensor, v: Tensor, positions: Tensor, live: Tensor) -> None:
        """Writes a chunk's frames (then `mask` or `query_positions` give the
        chunk's attention mask).

        k, v [B,T,H,D]; positions [B,T] absolute (consecutive per row, so the
        chunk's slots are distinct while T <= capacity); live [B,T] False for
        padding frames. Frames are written before the chunk attends, as the
        codec does: a query sees its own frame and the ring's content.
        """
        batch, length, heads, head_dim = k.shape
        if length > self.capacity:
            raise ValueError(f"a chunk of {length} frames does not fit a ring of {self.capacity}")
        slots = positions % self.capacity
        index = slots[:, None, :, None].expand(batch, heads, length, head_dim)
        self.k.scatter_(2, index, k.transpose(1, 2))
        self.v.scatter_(2, index, v.transpose(1, 2))
        # A padding frame empties its slot. The slot held the frame
        # `capacity` positions back, which the chunk's write would have
        # evicted for a live frame too.
        self.slot_positions.scatter_(1, slots, torch.where(live, positions, -1))

    def mask(self, positions: Tensor, live: Tensor) -> Tensor:
        """[B,1,T,S]: slot s holds a frame of this row's stream that is not
        after the query and less than `capacity` frames older."""
        key = self.slot_positions[:, None, None, :]
        age = positions[:, None, :, None] - key
        return (key >= 0) & (age >= 0) & (age < self.capacity) & live[:, None, :, None]

    @staticmethod
    def query_positions(positions: Tensor, live: Tensor) -> Tensor:
        """[B,T] int64 for moss::streaming_attention_positions: a padding
        frame's position is -1, so its row sees no key (as in `mask`)."""
        return torch.where(live, positions, -1)

    def release(self, row: int) -> None:
        """The row's stream ended: its slot serves a new stream from position 0."""
        self.slot_positions[row].fill_(-1)

    def reset(self) -> None:
        self.k.zero_()
        self.v.zero_()
        self.slot_positions.fill_(-1)
