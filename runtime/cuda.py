"""``opgrad.cuda``: what a CPU-only PyTorch build's ``torch.cuda`` answers, so that the
usual ``device = "cuda" if torch.cuda.is_available() else "cpu"`` guard picks the CPU.
Queries report no device; calls that need one raise PyTorch's AssertionError; seeding
and cache calls do nothing, as in a CPU-only build."""

from __future__ import annotations

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def _no_cuda(*args, **kwargs):
    raise AssertionError(_NOT_COMPILED)


current_device = synchronize = get_device_name = get_device_properties = init = _no_cuda
set_device = get_device_capability = _no_cuda


def _nothing(*args, **kwargs) -> None:
    """Seeding and freeing without a device: nothing to do."""


manual_seed = manual_seed_all = seed = seed_all = empty_cache = _nothing
