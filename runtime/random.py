"""The CPU random generator: PyTorch's mt19937 stream, its seeds and its saved state.

PyTorch's CPU generator is a 32-bit Mersenne Twister seeded with the reference
``init_genrand`` from the seed's low 32 bits; numpy's MT19937 bit generator runs the same
recurrence, so the generator keeps its state there and draws 32-bit words in bulk. The
kernels that turn words into rand/randn values live in :mod:`random_kernels`.
"""

from __future__ import annotations

import operator
import os
from typing import Optional

import numpy as np

# PyTorch's default_rng_seed_val: the seed of a new Generator().
_DEFAULT_SEED = 67280421310721
_N = 624  # mt19937 state words

# torch.get_rng_state()'s bytes: CPUGeneratorImplState, a C struct (x86-64 layout, padding
# zeroed) holding the legacy THGenerator fields and the cached normal samples.
_STATE_LAYOUT = np.dtype(
    {
        "names": [
            "the_initial_seed",
            "left",
            "seeded",
            "next",
            "state",
            "normal_x",
            "normal_y",
            "normal_rho",
            "normal_is_valid",
            "next_float_normal_sample",
            "is_next_float_normal_sample_valid",
        ],
        "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", _N), "<f8", "<f8", "<f8", "<i4"]
        + ["<f4", "u1"],
        "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
        "itemsize": 5056,
    }
)
_STATE_SIZE = _STATE_LAYOUT.itemsize


def _init_genrand(seed32: int) -> np.ndarray:
    """The reference Mersenne Twister seeding (what PyTorch's mt19937(seed) does)."""
    key = [seed32]
    for j in range(1, _N):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF)
    return np.array(key, dtype=np.uint32)


def _unpack_seed(seed) -> int:
    """A seed as PyTorch stores it: an unsigned 64-bit int, negatives wrapping around."""
    seed = operator.index(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError("Overflow when unpacking long long")
    return seed & (2**64 - 1)


def _nondeterministic_seed() -> int:
    return int.from_bytes(os.urandom(8), "little")


class Generator:
    """A CPU pseudo-random generator producing PyTorch's CPU stream (``torch.Generator``)."""

    __slots__ = ("_engine", "_seed", "_fresh", "_next_double", "_next_float")

    def __init__(self, device="cpu") -> None:
        if str(device) != "cpu":
            raise RuntimeError(
                "Cannot get CUDA generator without ATen_cuda library. opgrad computes on the "
                f"CPU only and has no generator for device {device!r}"
                if str(device).startswith("cuda")
                else f"opgrad has only the CPU generator, got device {device!r}"
            )
        self._engine = np.random.MT19937()
        # The normal kernels' cached second Box-Muller sample (PyTorch keeps one per dtype
        # family; its kernels only ever fill the double one).
        self._next_double: Optional[float] = None
        self._next_float: Optional[float] = None
        self.manual_seed(_DEFAULT_SEED)

    @property
    def device(self):
        from .device import device

        return device("cpu")

    def manual_seed(self, seed) -> "Generator":
        """Seed the generator; PyTorch's stream for that seed follows."""
        seed = _unpack_seed(seed)
        self._set_engine(_init_genrand(seed & 0xFFFFFFFF), _N)
        self._seed = seed
        self._fresh = True  # PyTorch reports next=0 until the first draw
        self._next_double = self._next_float = None
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Seed from the operating system's entropy and return that seed."""
        seed = _nondeterministic_seed()
        self.manual_seed(seed)
        return seed

    def get_state(self) -> bytes:
        """The state in ``torch.get_rng_state()``'s byte layout (5056 bytes; ``bytes``
        rather than a uint8 tensor, since opgrad has no uint8 dtype)."""
        pos = self._engine.state["state"]["pos"]
        record = np.zeros((), _STATE_LAYOUT)
        record["the_initial_seed"] = self._seed
        record["seeded"] = 1
        # PyTorch counts `left` down to the next twist, numpy counts `pos` up to it.
        record["left"] = 1 if pos == _N else _N + 1 - pos
        record["next"] = 0 if self._fresh else pos
        record["state"] = self._engine.state["state"]["key"]
        if self._next_double is not None:
            record["normal_is_valid"] = 1
            record["normal_y"] = self._next_double
        if self._next_float is not None:
            record["is_next_float_normal_sample_valid"] = 1
            record["next_float_normal_sample"] = self._next_float
        return record.tobytes()

    def set_state(self, new_state) -> "Generator":
        """Restore a state from :meth:`get_state` (or torch's bytes: ``bytes(t.numpy())``)."""
        if isinstance(new_state, np.ndarray) and new_state.dtype == np.uint8:
            new_state = new_state.tobytes()
        if not isinstance(new_state, (bytes, bytearray, memoryview)):
            raise TypeError(
                "RNG state must be the bytes get_rng_state() returned, "
                f"but got {type(new_state).__name__}"
            )
        if len(new_state) != _STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {_STATE_SIZE} but found the input "
                f"RNG state size to be {len(new_state)}"
            )
        record = np.frombuffer(bytes(new_state), _STATE_LAYOUT)[0]
        left, nxt = int(record["left"]), int(record["next"])
        # numpy's MT19937 keeps one counter, so `left` and `next` must agree as PyTorch
        # itself leaves them (any state PyTorch's get_rng_state returns does).
        if not record["seeded"] or not 0 < left <= _N or not (left + nxt == _N + 1 or left == 1):
            raise RuntimeError("Invalid mt19937 state")
        self._set_engine(record["state"].astype(np.uint32), _N if left == 1 else nxt)
        self._seed = int(record["the_initial_seed"])
        self._fresh = left == 1 and nxt == 0
        valid = bool(record["normal_is_valid"])
        self._next_double = float(record["normal_y"]) if valid else None
        valid = bool(record["is_next_float_normal_sample_valid"])
        self._next_float = float(record["next_float_normal_sample"]) if valid else None
        return self

    def _set_engine(self, key: np.ndarray, pos: int) -> None:
        state = {"key": key, "pos": pos}
        self._engine.state = {"bit_generator": "MT19937", "state": state}

    def _words(self, count: int) -> np.ndarray:
        """The next ``count`` 32-bit outputs, in stream order (as uint64)."""
        if count:
            self._fresh = False
        return self._engine.random_raw(count)

    def __repr__(self) -> str:
        return f"<opgrad.Generator object at {id(self):#x}>"


# Like PyTorch, the default generator starts from a nondeterministic seed.
default_generator = Generator()
default_generator.manual_seed(_nondeterministic_seed())


def generator() -> Generator:
    return default_generator


def manual_seed(seed) -> Generator:
    """Seed the default generator; returns it."""
    return default_generator.manual_seed(_unpack_seed(int(seed)))


def initial_seed() -> int:
    return default_generator.initial_seed()


def seed() -> int:
    """Seed the default generator nondeterministically; returns the seed."""
    return default_generator.seed()


def get_rng_state() -> bytes:
    """The default generator's state, in ``torch.get_rng_state()``'s 5056-byte layout."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Put the default generator back in a state :func:`get_rng_state` returned."""
    default_generator.set_state(new_state)
