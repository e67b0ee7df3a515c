"""The default random generator behind rand/randn (numpy's PCG64)."""

from __future__ import annotations

import numpy as np

# PyTorch's default initial seed.
_DEFAULT_SEED = 67280421310721
_state = {"seed": _DEFAULT_SEED, "generator": np.random.default_rng(_DEFAULT_SEED)}


def generator() -> np.random.Generator:
    return _state["generator"]


def manual_seed(seed: int):
    """Seed the generator behind opgrad's random factories."""
    seed = int(seed)
    _state["seed"] = seed
    _state["generator"] = np.random.default_rng(seed & (2**64 - 1))
    return _state["generator"]


def initial_seed() -> int:
    return _state["seed"]


def seed() -> int:
    new = int(np.random.SeedSequence().entropy) & (2**63 - 1)
    manual_seed(new)
    return new


def get_rng_state():
    """A snapshot of the generator's state, for :func:`set_rng_state` (a plain object, not
    PyTorch's uint8 tensor: numpy's state is what there is to keep)."""
    return (_state["seed"], _state["generator"].bit_generator.state)


def set_rng_state(state) -> None:
    """Put the generator back in a state that :func:`get_rng_state` returned."""
    seed, bit_state = state
    generator = np.random.default_rng()
    generator.bit_generator.state = bit_state
    _state["seed"], _state["generator"] = seed, generator
