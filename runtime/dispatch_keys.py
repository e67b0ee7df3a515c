"""Dispatch keys as int bits: a higher bit is a higher-priority key.

PyTorch's order for a CPU tensor, highest first: Autograd, ADInplaceOrView,
Python, CPU. A call's key set is the union of its tensors' keys plus the
thread-local included keys, minus the thread-local excluded ones; the highest
key whose kernel is not a fallthrough runs.
"""

CPU = 1
PYTHON = 2
AD_INPLACE_OR_VIEW = 4
AUTOGRAD = 8

#: Every key, highest priority first.
ORDER = (AUTOGRAD, AD_INPLACE_OR_VIEW, PYTHON, CPU)
NAMES = {AUTOGRAD: "Autograd", AD_INPLACE_OR_VIEW: "ADInplaceOrView", PYTHON: "Python", CPU: "CPU"}
BY_NAME = {name: key for key, name in NAMES.items()}
BY_NAME.update(CompositeImplicitAutograd=AUTOGRAD | CPU, AutogradCPU=AUTOGRAD)

ALL = AUTOGRAD | AD_INPLACE_OR_VIEW | PYTHON | CPU
#: Keys a plain tensor carries, whether or not it requires grad.
DEFAULT_TENSOR_KEYS = AUTOGRAD | AD_INPLACE_OR_VIEW | CPU
#: Inference tensors skip autograd and view tracking.
INFERENCE_TENSOR_KEYS = CPU

#: Not a dispatch key: set in the thread-local include bits while a TorchFunctionMode is
#: live, so op entries test it with the include bits they read anyway. ``keep`` never
#: holds it, so it never reaches a key set.
TORCH_FUNCTION = 16

AFTER_AUTOGRAD = ALL & ~AUTOGRAD
AFTER_AD_INPLACE_OR_VIEW = AFTER_AUTOGRAD & ~AD_INPLACE_OR_VIEW
AFTER_PYTHON = CPU


def key_names(keyset: int) -> list:
    """Names of the keys in ``keyset``, highest first."""
    return [NAMES[k] for k in ORDER if keyset & k]
