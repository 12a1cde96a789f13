"""The student: a small residual net in KataGo's layout, written in torch (imports torch).

The layers are exactly those of a KataGo model version 8 (``miai.nets.katago_desc``): pre-activation
residual blocks (batch norm, ReLU, 3x3 conv, twice), some of them global-pooling blocks whose pooled
mean/scaled-mean/max of a few channels bias the others (this is how the net learns the board size
and whole-board facts such as komi), a policy head (one channel plus pass) and a value head
(win/loss/no-result logits, four raw score values, pre-tanh ownership). Every activation is
multiplied by the on-board mask (input plane 0) and the pooling only counts on-board points, so one
net serves any board size up to 19 (or padded boards).

Because the structure is KataGo's, ``miai.nets.train.export`` turns the weights into a
``ModelDesc`` and emits the ONNX graph with the same builder the converter uses.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["ModelConfig", "StudentNet", "NUM_MISC"]

NUM_SPATIAL = 22
NUM_GLOBAL = 19
NUM_MISC = 4  # raw scoreMean, scoreStdev, lead, varTimeLeft (model version 8)
BN_EPSILON = 1e-5


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the student (defaults: 5 blocks of 48 channels, blocks 1 and 3 pool globally)."""

    blocks: int = 5
    channels: int = 48
    gpool_channels: int = 12
    gpool_blocks: tuple[int, ...] = (1, 3)
    head_channels: int = 24
    value_hidden: int = 48
    initial_kernel: int = 3

    def to_json(self) -> dict[str, Any]:
        """JSON-ready fields."""
        data = asdict(self)
        data["gpool_blocks"] = list(self.gpool_blocks)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelConfig:
        """Inverse of ``to_json``."""
        fields = dict(data)
        fields["gpool_blocks"] = tuple(fields.get("gpool_blocks", ()))
        return cls(**fields)


class _Board:
    """Mask facts shared by every layer of one forward pass."""

    def __init__(self, mask: torch.Tensor) -> None:
        self.mask = mask  # [N, 1, H, W]
        self.count = mask.sum(dim=(2, 3))  # [N, 1]
        offset = torch.sqrt(self.count) - 14.0
        self.scale1 = offset * 0.1
        self.scale2 = offset * offset * 0.01 - 0.1
        self.off_board = (mask - 1.0) * 1.0e9

    def pool(self, x: torch.Tensor) -> torch.Tensor:
        """[N, C, H, W] masked -> [N, 3C]: mean, mean * (sqrt(points) - 14) / 10, on-board max."""
        mean = x.sum(dim=(2, 3)) / self.count
        maximum = (x + self.off_board).amax(dim=(2, 3))
        return torch.cat([mean, mean * self.scale1, maximum], dim=1)

    def value_pool(self, x: torch.Tensor) -> torch.Tensor:
        """The value head's pooling: mean, mean * scale1, mean * scale2."""
        mean = x.sum(dim=(2, 3)) / self.count
        return torch.cat([mean, mean * self.scale1, mean * self.scale2], dim=1)


def _conv(cin: int, cout: int, kernel: int) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=False)


class NormAct(nn.Module):
    """Batch norm, ReLU, then zero off the board."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(channels, eps=BN_EPSILON)

    def forward(self, x: torch.Tensor, board: _Board) -> torch.Tensor:
        return F.relu(self.norm(x)) * board.mask


class OrdinaryBlock(nn.Module):
    """x + conv(normact(conv(normact(x))))."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.pre = NormAct(channels)
        self.conv1 = _conv(channels, channels, 3)
        self.mid = NormAct(channels)
        self.conv2 = _conv(channels, channels, 3)

    def forward(self, x: torch.Tensor, board: _Board) -> torch.Tensor:
        return x + self.conv2(self.mid(self.conv1(self.pre(x, board)), board))


class GPoolBlock(nn.Module):
    """A residual block whose first conv is biased by globally pooled features of a few channels."""

    def __init__(self, channels: int, gpool: int) -> None:
        super().__init__()
        regular = channels - gpool
        self.pre = NormAct(channels)
        self.regular = _conv(channels, regular, 3)
        self.gconv = _conv(channels, gpool, 3)
        self.gnorm = NormAct(gpool)
        self.to_bias = nn.Linear(3 * gpool, regular, bias=False)
        self.mid = NormAct(regular)
        self.conv2 = _conv(regular, channels, 3)

    def forward(self, x: torch.Tensor, board: _Board) -> torch.Tensor:
        pre = self.pre(x, board)
        pooled = board.pool(self.gnorm(self.gconv(pre), board))
        out = self.regular(pre) + self.to_bias(pooled)[:, :, None, None]
        return x + self.conv2(self.mid(out, board))


class PolicyHead(nn.Module):
    """Board logits from a 1x1 conv biased by pooled features; the pass logit from the pool."""

    def __init__(self, channels: int, head: int) -> None:
        super().__init__()
        self.p1 = _conv(channels, head, 1)
        self.g1 = _conv(channels, head, 1)
        self.gnorm = NormAct(head)
        self.to_bias = nn.Linear(3 * head, head, bias=False)
        self.p1norm = NormAct(head)
        self.p2 = _conv(head, 1, 1)
        self.to_pass = nn.Linear(3 * head, 1, bias=False)

    def forward(self, trunk: torch.Tensor, board: _Board) -> torch.Tensor:
        pooled = board.pool(self.gnorm(self.g1(trunk), board))
        biased = self.p1(trunk) + self.to_bias(pooled)[:, :, None, None]
        logits = self.p2(self.p1norm(biased, board)).flatten(2)  # [N, 1, H*W]
        return torch.cat([logits, self.to_pass(pooled)[:, :, None]], dim=2)


class ValueHead(nn.Module):
    """Value logits, raw score values and pre-tanh ownership."""

    def __init__(self, channels: int, head: int, hidden: int) -> None:
        super().__init__()
        self.v1 = _conv(channels, head, 1)
        self.v1norm = NormAct(head)
        self.v2 = nn.Linear(3 * head, hidden)
        self.value = nn.Linear(hidden, 3)
        self.misc = nn.Linear(hidden, NUM_MISC)
        self.ownership = _conv(head, 1, 1)

    def forward(self, trunk: torch.Tensor, board: _Board) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        v1 = self.v1norm(self.v1(trunk), board)
        hidden = F.relu(self.v2(board.value_pool(v1)))
        return self.value(hidden), self.misc(hidden), self.ownership(v1)


class StudentNet(nn.Module):
    """The whole student; ``forward(spatial [N,22,H,W], global [N,19])`` returns the four raw
    outputs of the ONNX interface: policy [N,1,H*W+1], value [N,3], misc [N,4], ownership [N,1,H,W]."""

    def __init__(self, config: ModelConfig | None = None) -> None:
        super().__init__()
        self.config = config or ModelConfig()
        c = self.config
        self.initial_conv = _conv(NUM_SPATIAL, c.channels, c.initial_kernel)
        self.initial_global = nn.Linear(NUM_GLOBAL, c.channels, bias=False)
        self.blocks = nn.ModuleList(
            GPoolBlock(c.channels, c.gpool_channels) if i in c.gpool_blocks else OrdinaryBlock(c.channels)
            for i in range(c.blocks)
        )
        self.tip = NormAct(c.channels)
        self.policy = PolicyHead(c.channels, c.head_channels)
        self.value = ValueHead(c.channels, c.head_channels, c.value_hidden)
        self._init_residuals()

    def _init_residuals(self) -> None:
        """Start each residual branch near zero so the deep net begins as a shallow one (stable
        training without warm-up tricks)."""
        for block in self.blocks:
            nn.init.normal_(block.conv2.weight, std=1e-3)

    def forward(
        self, spatial: torch.Tensor, global_: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        board = _Board(spatial[:, 0:1])
        x = self.initial_conv(spatial) + self.initial_global(global_)[:, :, None, None]
        for block in self.blocks:
            x = block(x, board)
        trunk = self.tip(x, board)
        policy = self.policy(trunk, board)
        value, misc, ownership = self.value(trunk, board)
        return policy, value, misc, ownership
