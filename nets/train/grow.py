"""Growing a trained student into a larger one that computes the same function (imports torch).

A larger student trained from scratch spends its first hours relearning what the smaller one knows;
started from a grown copy, it starts at the smaller net's strength and spends its training on what
the extra capacity adds ("Net2Net", Chen, Goodfellow and Shlens 2016, in its zero-init form).

Every weight of the source goes into the top-left corner of the same weight in the target. A new
channel is *computed* from old ones by fresh random weights but *read* by nothing yet: every weight
that takes a new channel as input is zero. So the new channels carry non-zero activations (batch
norms see real variance, gradients reach the weights that read them) while the outputs stay
exactly the source's. New residual blocks go after the old ones with their last convolution zero,
so each starts as the identity.
"""

from __future__ import annotations

import torch
from torch import nn

from miai.nets.train import TrainError
from miai.nets.train.model import GPoolBlock, ModelConfig, NormAct, OrdinaryBlock, PolicyHead, StudentNet, ValueHead

__all__ = ["grow", "check_growable"]


def check_growable(source: ModelConfig, target: ModelConfig) -> None:
    """Raises ``TrainError`` (in the user's words) unless ``target`` is ``source`` with more or wider layers."""
    sizes = ("blocks", "channels", "gpool_channels", "head_channels", "value_hidden")
    smaller = [name for name in sizes if getattr(target, name) < getattr(source, name)]
    if smaller:
        raise TrainError(f"cannot shrink a net: the new {', '.join(smaller)} would be smaller than the source's "
                         f"({source.blocks} blocks of {source.channels} channels)")
    if target.channels - target.gpool_channels < source.channels - source.gpool_channels:
        raise TrainError("cannot shrink a net: the new global-pooling blocks would have fewer regular channels")
    if target.gpool_blocks != source.gpool_blocks or target.initial_kernel != source.initial_kernel:
        raise TrainError(f"a grown net keeps the source's global-pooling blocks {list(source.gpool_blocks)} "
                         f"and first kernel {source.initial_kernel}")


def grow(source: StudentNet, target_config: ModelConfig, seed: int = 0) -> StudentNet:
    """A ``target_config`` student (eval mode) whose outputs equal ``source``'s on every input."""
    check_growable(source.config, target_config)
    with torch.random.fork_rng():  # the new channels' random weights, without touching the caller's generator
        torch.manual_seed(seed)
        target = StudentNet(target_config)
    with torch.no_grad():
        _place(target.initial_conv.weight, source.initial_conv.weight)
        _place(target.initial_global.weight, source.initial_global.weight)
        for new, old in zip(target.blocks, source.blocks):
            _block(new, old)
        for new in list(target.blocks)[len(source.blocks):]:
            new.conv2.weight.zero_()  # a new block adds nothing to the trunk until trained
        _norm(target.tip, source.tip)
        _policy(target.policy, source.policy)
        _value(target.value, source.value)
    target.eval()
    return target


def _place(new: torch.Tensor, old: torch.Tensor, in_groups: int = 1) -> None:
    """Copies ``old`` into the leading rows and columns of ``new`` and zeroes the columns that read new inputs.

    ``in_groups`` > 1 is for inputs laid out as several equal groups of channels (the pooled features:
    mean, scaled mean, max), where the old channels lead each group."""
    rows = old.shape[0]
    if new.dim() == 1:
        new[:rows] = old
        return
    new_width, old_width = new.shape[1] // in_groups, old.shape[1] // in_groups
    for group in range(in_groups):
        start = group * new_width
        new[:, start + old_width:start + new_width] = 0.0
        new[:rows, start:start + old_width] = old[:, group * old_width:(group + 1) * old_width]


def _norm(new: NormAct, old: NormAct) -> None:
    for name in ("weight", "bias", "running_mean", "running_var"):
        _place(getattr(new.norm, name), getattr(old.norm, name))


def _block(new: nn.Module, old: nn.Module) -> None:
    _norm(new.pre, old.pre)
    _norm(new.mid, old.mid)
    _place(new.conv2.weight, old.conv2.weight)
    if isinstance(old, OrdinaryBlock):
        _place(new.conv1.weight, old.conv1.weight)
        return
    assert isinstance(new, GPoolBlock) and isinstance(old, GPoolBlock)
    _place(new.regular.weight, old.regular.weight)
    _place(new.gconv.weight, old.gconv.weight)
    _norm(new.gnorm, old.gnorm)
    _place(new.to_bias.weight, old.to_bias.weight, in_groups=3)


def _policy(new: PolicyHead, old: PolicyHead) -> None:
    _place(new.p1.weight, old.p1.weight)
    _place(new.g1.weight, old.g1.weight)
    _norm(new.gnorm, old.gnorm)
    _place(new.to_bias.weight, old.to_bias.weight, in_groups=3)
    _norm(new.p1norm, old.p1norm)
    _place(new.p2.weight, old.p2.weight)
    _place(new.to_pass.weight, old.to_pass.weight, in_groups=3)


def _value(new: ValueHead, old: ValueHead) -> None:
    _place(new.v1.weight, old.v1.weight)
    _norm(new.v1norm, old.v1norm)
    _place(new.v2.weight, old.v2.weight, in_groups=3)
    assert new.v2.bias is not None and old.v2.bias is not None
    _place(new.v2.bias, old.v2.bias)
    for new_linear, old_linear in ((new.value, old.value), (new.misc, old.misc)):
        _place(new_linear.weight, old_linear.weight)
        assert new_linear.bias is not None and old_linear.bias is not None
        _place(new_linear.bias, old_linear.bias)
    _place(new.ownership.weight, old.ownership.weight)
