"""``opgrad.device``: where a tensor lives. opgrad computes on the CPU only, but
device objects behave as PyTorch's so that code inspecting them runs unchanged, and
asking for another device fails as it fails in a CPU-only PyTorch build: CUDA (and
XPU) with an AssertionError, other backends with the error of a build that lacks
them. opgrad has no meta device either: shapes-only tensors are not supported, so
``device="meta"`` fails like any backend the build lacks rather than silently giving
a CPU tensor."""

from __future__ import annotations

import re
from typing import Optional, Union

# The device types PyTorch's parser knows, in its error message's order.
_KNOWN_TYPES = (
    "cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta "
    "hpu mtia privateuseone"
).split()
_DEVICE_STRING = re.compile(r"([a-zA-Z]+)(?::([1-9][0-9]*|0))?")
# Backends a CPU-only PyTorch build asserts it was not compiled with.
_NOT_COMPILED = {"cuda": "CUDA", "xpu": "XPU"}
# How PyTorch's dispatcher names a backend in "Could not run ... from the 'X' backend".
_BACKEND_NAMES = {
    "cuda": "CUDA",
    "xpu": "XPU",
    "ipu": "IPU",
    "mkldnn": "MkldnnCPU",
    "opengl": "OpenGL",
    "opencl": "OpenCL",
    "ideep": "IDEEP",
    "hip": "HIP",
    "ve": "VE",
    "fpga": "FPGA",
    "maia": "MAIA",
    "xla": "XLA",
    "lazy": "Lazy",
    "vulkan": "Vulkan",
    "mps": "MPS",
    "meta": "Meta",
    "hpu": "HPU",
    "mtia": "MTIA",
    "privateuseone": "PrivateUse1",
}
_NO_ACCELERATOR = "Cannot access accelerator device when none is available."


class device:
    """A device type and an optional index: ``device("cpu")``, ``device("cuda:1")``."""

    __slots__ = ("type", "index")

    def __init__(self, type: Union[str, "device", int], index: Optional[int] = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, int) and not isinstance(type, bool):
            # a bare index means the current accelerator, and there is none
            raise RuntimeError("Device index must not be negative" if type < 0 else _NO_ACCELERATOR)
        elif isinstance(type, str):
            type, index = _parse(type, index)
        else:
            raise TypeError(
                f"device() received an invalid combination of arguments - got "
                f"({_type_name(type)}), but expected one of:\n * (opgrad.device device)\n"
                " * (str type, int index = -1)\n"
            )
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        # as in PyTorch, a device never equals a string
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


def _parse(text: str, index: Optional[int]) -> tuple:
    """(type, index) of a device string, with PyTorch's errors."""
    if not text:
        raise RuntimeError("Device string must not be empty")
    match = _DEVICE_STRING.fullmatch(text)
    if match is None:
        raise RuntimeError(f"Invalid device string: '{text}'")
    kind, number = match.groups()
    if number is not None:
        if index is not None:
            raise RuntimeError(
                "type (string) must not include an index because index was passed explicitly: "
                f"{text}"
            )
        index = int(number)
    if kind not in _KNOWN_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(_KNOWN_TYPES)} device type at start of device "
            f"string: {kind}"
        )
    return kind, index


def _type_name(value) -> str:
    return type(value).__name__


def is_device_like(value) -> bool:
    """What PyTorch's parser takes for a Device argument: a device, a string or an index."""
    return isinstance(value, (device, str)) or (
        isinstance(value, int) and not isinstance(value, bool)
    )


def _not_compiled(d: device) -> Optional[AssertionError]:
    name = _NOT_COMPILED.get(d.type)
    return AssertionError(f"Torch not compiled with {name} enabled") if name else None


def check_factory_device(
    value, kernel: str = "empty.memory_format", python_call: bool = True
) -> device:
    """A device a new tensor is made on (``zeros(2, device=...)``): the CPU, or PyTorch's
    error for a device this build lacks (``kernel`` is the op torch names in it). A call
    from Python first meets the CUDA/XPU runtime's assertion, an ``ops.aten`` call the
    dispatcher's refusal."""
    d = value if value.__class__ is device else device(value)
    if d.type == "cpu":
        return d
    error = _not_compiled(d) if python_call else None
    if error is not None:
        raise error
    raise NotImplementedError(
        f"Could not run 'aten::{kernel}' with arguments from the '{_BACKEND_NAMES[d.type]}' "
        f"backend. This could be because the operator doesn't exist for this backend. opgrad "
        f"computes on the CPU only: 'aten::{kernel}' is only available for these backends: "
        "[CPU]."
    )


def check_target_device(value) -> device:
    """A device a tensor is moved or copied to (``x.to(...)``, ``tensor(data, device=...)``):
    the CPU, or PyTorch's error for a device this build lacks."""
    d = value if value.__class__ is device else device(value)
    if d.type == "cpu":
        return d
    error = _not_compiled(d)
    if error is not None:
        raise error
    if d.type == "meta":  # torch has it, opgrad has no kernels for it: as factories refuse it
        check_factory_device(d, "_to_copy")
    raise RuntimeError(f"opgrad is not linked with support for {d.type} devices")


CPU = device("cpu")
