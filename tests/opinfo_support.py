"""PyTorch's OpInfo samples, run through opgrad.

``torch.testing._internal.common_methods_invocations.op_db`` describes PyTorch's
ops: how to call each one, its sample inputs, what autograd it supports and which
of PyTorch's own tests skip or expect to fail for it. This module picks the
OpInfos whose op opgrad has, turns a sample's arguments into fresh tensors of
either library (same values, strides and storage offset), and reads off which of
the tests test_opinfo.py mirrors torch itself skips on CPU float64.

``python tests/opinfo_support.py`` rewrites ``data/opinfo_coverage.json``, the
list of OpInfos the tests cover.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import types
import unittest
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

import opgrad as og

COVERAGE_PATH = Path(__file__).resolve().parent / "data" / "opinfo_coverage.json"

#: The test of PyTorch's test_ops.py that each check here mirrors: a skip or
#: expectedFailure op_db attaches to it for CPU float64 skips the check here.
MIRRORED = {
    "forward": ("TestCommon", "test_compare_cpu"),
    "gradient": ("TestBwdGradients", "test_fn_grad"),
    "second_derivative": ("TestBwdGradients", "test_fn_gradgrad"),
    "forward_ad": ("TestFwdGradients", "test_forward_mode_AD"),
    # the same samples made noncontiguous (SampleInput.noncontiguous), as that test does
    "forward_noncontiguous": ("TestCommon", "test_noncontiguous_samples"),
    "gradient_noncontiguous": ("TestCommon", "test_noncontiguous_samples"),
}


def load_op_db():
    """``op_db``; without it the calling module is skipped (fails under ``CI=true``)."""
    try:
        import torch  # noqa: F401
        from torch.testing._internal.common_methods_invocations import op_db
    except ImportError as exc:  # pragma: no cover - depends on the machine
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but PyTorch's OpInfo database is missing: {exc}", pytrace=False)
        pytest.skip(f"PyTorch's OpInfo database is not importable: {exc}", allow_module_level=True)
    return op_db


# ---- which OpInfos opgrad has ------------------------------------------------------------


def opinfo_id(opinfo) -> str:
    """``'mul'``, ``'div.floor_rounding'``: the OpInfo's name and variant."""
    return opinfo.name + (f".{opinfo.variant_test_name}" if opinfo.variant_test_name else "")


def _resolve(root, dotted: str):
    for part in dotted.split("."):
        root = getattr(root, part, None)
        if root is None:
            return None
    return root


def opgrad_exposes(name: str) -> bool:
    """opgrad has ``name`` as a function (``opgrad.nn.functional.relu``) or Tensor attribute."""
    return _resolve(og, name) is not None or ("." not in name and hasattr(og.Tensor, name))


def _seeded(op, *args, **kwargs):
    """opgrad's ``wrapper_set_seed``: the op runs from seed 42, as torch's runs from its."""
    og.manual_seed(42)
    return op(*args, **kwargs)


_REBOUND_GLOBALS: Dict[int, dict] = {}


def rebind(fn: Callable) -> Callable:
    """A test helper of torch's (a lambda in op_db) with ``torch`` meaning opgrad."""
    env = _REBOUND_GLOBALS.get(id(fn.__globals__))
    if env is None:
        env = {**fn.__globals__, "torch": og, "wrapper_set_seed": _seeded}
        _REBOUND_GLOBALS[id(fn.__globals__)] = env
    return types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, fn.__closure__)


def _is_test_helper(fn) -> bool:
    return isinstance(fn, types.FunctionType) and fn.__module__.startswith("torch.testing.")


def opgrad_op(opinfo) -> Optional[Callable]:
    """opgrad's counterpart of ``opinfo.op``, or None when opgrad lacks it."""
    import torch

    fn = opinfo.op
    if _is_test_helper(fn):
        return rebind(fn)
    if isinstance(fn, torch._ops.OpOverload):
        return _resolve(og.ops.aten, f"{fn._overloadpacket.__name__}.{fn._overloadname}")
    if isinstance(fn, torch._ops.OpOverloadPacket):  # the overload is picked per call
        return getattr(og.ops.aten, fn.__name__, None)
    prefix = "nn.functional."
    if opinfo.name.startswith(prefix):
        # F.logsigmoid is torch._C._nn.log_sigmoid, F.threshold is named _threshold: the
        # OpInfo's name is the function's name in torch.nn.functional
        short = opinfo.name[len(prefix) :]
        if getattr(torch.nn.functional, short, None) is fn:
            return getattr(_resolve(og, "nn.functional"), short, None)
    if opinfo.name.startswith(("linalg.", "special.")) and _resolve(torch, opinfo.name) is fn:
        # torch.linalg.vector_norm is named linalg_vector_norm, torch.special.entr special_entr
        return _resolve(og, opinfo.name)
    name = getattr(fn, "__name__", None)
    for torch_space, og_space in (
        (torch, og),
        (torch.Tensor, og.Tensor),
        (torch.nn.functional, _resolve(og, "nn.functional")),
    ):
        if name and getattr(torch_space, name, None) is fn:
            return getattr(og_space, name, None)
    return None


# ---- which checks torch itself skips ----------------------------------------------------


class _CpuTestCase:
    """What a device-type decorator reads off the test instance it wraps."""

    device_type = "cpu"
    precision = 0.0
    rel_tol = 0.0


def _skip_reason(decorator, opinfo) -> Optional[str]:
    """Why ``decorator`` keeps the test from running (and passing) on CPU, or None."""

    def probe(self, *args, **kwargs):
        return None

    wrapped = decorator(probe)
    if getattr(wrapped, "__unittest_skip__", False):
        return wrapped.__unittest_skip_why__
    if getattr(wrapped, "__unittest_expecting_failure__", False):
        return "expectedFailure"
    try:  # device restrictions (onlyCUDA) raise SkipTest when the wrapped test runs
        import torch

        wrapped(_CpuTestCase(), "cpu", torch.float64, opinfo)
    except unittest.SkipTest as exc:
        return str(exc) or "skipped"
    except Exception:  # noqa: BLE001 - a decorator that is no skip
        return None
    return None


def torch_skip(opinfo, check: str) -> Optional[str]:
    """torch's reason for skipping (or xfailing) the test ``check`` mirrors, for this op."""
    import torch
    from torch.testing._internal.opinfo.core import DecorateInfo

    cls_name, test_name = MIRRORED[check]
    for info in opinfo.decorators:
        if not isinstance(info, DecorateInfo):
            decorators = [info]
        elif info.is_active(cls_name, test_name, "cpu", torch.float64, {}):
            decorators = info.decorators
        else:
            continue
        for decorator in decorators:
            reason = _skip_reason(decorator, opinfo)
            if reason is not None:
                return f"torch skips {cls_name}.{test_name} for {opinfo_id(opinfo)}: {reason}"
    return None


# ---- the cases ---------------------------------------------------------------------------


@dataclass
class OpCase:
    """One OpInfo opgrad has, with its float64 samples."""

    id: str
    opinfo: Any
    og_op: Callable
    samples: List[Any] = field(repr=False)
    noncontiguous: bool = False

    def op(self, lib):
        return self.og_op if lib is og else self.opinfo.op

    def call(self, lib, sample_args):
        """Run the op as torch's gradient tests do (through the OpInfo's gradcheck_wrapper)."""
        wrapper = self.opinfo.gradcheck_wrapper
        if lib is og and _is_test_helper(wrapper):
            wrapper = rebind(wrapper)
        first, args, kwargs = sample_args
        return wrapper(self.op(lib), first, *args, **kwargs)

    def output_process(self, lib, sample):
        fn = sample.output_process_fn_grad
        return rebind(fn) if lib is og and _is_test_helper(fn) else fn


def collect_cases(op_db) -> List[OpCase]:
    """The OpInfos of ``op_db`` whose op opgrad has, each with its float64 samples."""
    import torch

    cases = []
    for opinfo in op_db:
        # an OpInfo of a bare aten op (torch.ops.aten._upsample_bilinear2d_aa) names an op
        # torch has no function for; opgrad_op finds it under opgrad.ops.aten
        exposed = opgrad_exposes(opinfo.name) or isinstance(opinfo.op, torch._ops.OpOverloadPacket)
        if not exposed or torch.float64 not in opinfo.supported_dtypes("cpu"):
            continue
        og_fn = opgrad_op(opinfo)
        if og_fn is None:
            continue
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            samples = list(
                opinfo.sample_inputs("cpu", torch.float64, requires_grad=opinfo.supports_autograd)
            )
        cases.append(OpCase(opinfo_id(opinfo), opinfo, og_fn, samples))
    return cases


def noncontiguous_cases(cases: List[OpCase]) -> List[OpCase]:
    """The same cases with every sample's tensors made noncontiguous (same values)."""
    return [
        dataclasses.replace(
            case, samples=[s.noncontiguous() for s in case.samples], noncontiguous=True
        )
        for case in cases
    ]


# ---- a sample's arguments as fresh tensors of one library ------------------------------


def _opgrad_constant(value):
    """A non-tensor argument of torch's as opgrad spells it."""
    import torch

    if isinstance(value, torch.Size):
        return og.Size(value)
    if isinstance(value, (torch.dtype, torch.memory_format, torch.layout)):
        name = str(value).rsplit(".", 1)[-1]
        if not hasattr(og, name):
            raise NotImplementedError(f"opgrad has no {value}")
        return getattr(og, name)
    if isinstance(value, torch.device):
        return og.device(str(value))
    if isinstance(value, torch.nn.PairwiseDistance):
        # triplet_margin_with_distance_loss's samples pass the module (opgrad.nn has no
        # modules yet): its forward with the module's settings
        return functools.partial(
            og.nn.functional.pairwise_distance, p=value.norm, eps=value.eps, keepdim=value.keepdim
        )
    return value


def fresh_leaf(lib, t, *, requires_grad: bool):
    """A new leaf of ``lib`` with ``t``'s values, strides and storage offset (a copy of its
    whole storage underneath, so views and as_strided see what they see in torch)."""
    import torch

    storage = torch.as_strided(
        t.detach(), (t.untyped_storage().nbytes() // t.element_size(),), (1,), 0
    )
    flat = lib.from_numpy(storage.numpy().copy())
    leaf = flat.as_strided(tuple(t.shape), tuple(t.stride()), t.storage_offset()).detach()
    return leaf.requires_grad_(requires_grad)


def sample_args(lib, sample, *, requires_grad=True, make_tensor=None):
    """``(input, args, kwargs)`` of ``sample`` as fresh values of ``lib``, and the list of its
    tensors that torch's sample marks requires_grad (in order of appearance).

    ``make_tensor(leaf, index)`` may replace each of those tensors (forward-mode duals).
    """
    import torch

    differentiable = []

    def convert(value):
        if isinstance(value, torch.Tensor):
            wanted = value.requires_grad
            leaf = fresh_leaf(lib, value, requires_grad=wanted and requires_grad)
            if wanted:
                differentiable.append(leaf)
                if make_tensor is not None:
                    leaf = make_tensor(leaf, len(differentiable) - 1)
            return leaf
        if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
            return type(value)(convert(v) for v in value)
        if isinstance(value, dict):
            return {k: convert(v) for k, v in value.items()}
        return value if lib is torch else _opgrad_constant(value)

    converted = (convert(sample.input), convert(sample.args), convert(sample.kwargs))
    return converted, differentiable


def tensors_in(value, lib) -> list:
    """The tensors in a (nested) output, in order."""
    if isinstance(value, lib.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v, lib)]
    return []


# ---- the coverage list ------------------------------------------------------------------


def coverage(cases: List[OpCase]) -> dict:
    import torch

    return {
        "torch": torch.__version__.split("+")[0],
        "opinfos": len(cases),
        "samples": sum(len(c.samples) for c in cases),
        "covered": sorted(c.id for c in cases),
    }


def read_coverage() -> dict:
    return json.loads(COVERAGE_PATH.read_text())


if __name__ == "__main__":  # rewrite the coverage list
    COVERAGE_PATH.write_text(json.dumps(coverage(collect_cases(load_op_db())), indent=1) + "\n")
    print(f"wrote {COVERAGE_PATH}")
