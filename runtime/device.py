"""``opgrad.device``: where a tensor lives. opgrad computes on the CPU only, but
device objects behave as PyTorch's so that code inspecting them runs unchanged."""

from __future__ import annotations

from typing import Optional, Union

# The device types PyTorch's parser knows, in its error message's order.
_KNOWN_TYPES = (
    "cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta "
    "hpu mtia privateuseone"
).split()


class device:
    """A device type and an optional index: ``device("cpu")``, ``device("cuda:1")``."""

    __slots__ = ("type", "index")

    def __init__(self, type: Union[str, "device"], index: Optional[int] = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, str) and ":" in type and index is None:
            type, _, number = type.partition(":")
            if not number.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{number}'")
            index = int(number)
        if type not in _KNOWN_TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(_KNOWN_TYPES)} device type at start of device "
                f"string: {type}"
            )
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


CPU = device("cpu")
