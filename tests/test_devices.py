"""Devices as a CPU-only PyTorch build has them: ``opgrad.cuda`` reports no device, the
CPU is accepted everywhere a device is, Tensor.to takes torch's three signatures, and
Python's float/int/bool stand for dtypes as in torch. (Refusals are in the bad-input
battery, test_bad_inputs.py.)"""

import pytest

import opgrad as og
from torch_oracle import assert_same, result_scenario


def test_cuda_module_answers_as_a_cpu_only_build(torch):
    def scenario(lib):
        cuda = lib.cuda
        cuda.manual_seed(0), cuda.manual_seed_all(0), cuda.empty_cache()
        return cuda.is_available(), cuda.device_count(), cuda.is_initialized()

    assert_same(torch, scenario)


def test_the_usual_device_guard_picks_the_cpu(torch):
    def scenario(lib, tensor):
        device = "cuda" if lib.cuda.is_available() else "cpu"
        return lib.ones(2, device=device).to(device) + tensor([1.0, 2.0], device=device)

    assert_same(torch, result_scenario(scenario))


def test_tensors_are_not_on_cuda_or_meta(torch):
    assert_same(torch, lambda lib: (lib.ones(2).is_cuda, lib.ones(2).is_meta, lib.ones(2).is_cpu))


@pytest.mark.parametrize(
    "device", ["cpu", "cpu:0", "cpu:1", "cuda", "cuda:1", "meta", "mps"], ids=str
)
def test_device_objects_parse_as_torch_parses_them(torch, device):
    def scenario(lib):
        d = lib.device(device)
        return d.type, d.index, str(d), repr(d)

    assert_same(torch, scenario)


TO_CALLS = [
    ("same_dtype", lambda L, x: x.to(L.float32)),
    ("dtype", lambda L, x: x.to(L.float64)),
    ("cpu", lambda L, x: x.to("cpu")),
    ("cpu_device_object", lambda L, x: x.to(L.device("cpu"))),
    ("cpu_and_dtype", lambda L, x: x.to("cpu", L.int32)),
    ("keywords", lambda L, x: x.to(device="cpu", dtype=L.float64)),
    ("other_tensor", lambda L, x: x.to(L.ones(1, dtype=L.int64))),
    ("python_float", lambda L, x: x.to(float)),
    ("python_int", lambda L, x: x.to(int)),
    ("python_bool", lambda L, x: x.to(bool)),
    ("none", lambda L, x: x.to(None)),
    ("non_blocking", lambda L, x: x.to(L.float64, True)),
    ("copy", lambda L, x: x.to(L.float32, copy=True)),
    ("cpu_copy_positional", lambda L, x: x.to("cpu", L.float32, False, True)),
]


@pytest.mark.parametrize("call", [c[1] for c in TO_CALLS], ids=[c[0] for c in TO_CALLS])
def test_to_takes_torchs_signatures(torch, call):
    def scenario(lib):
        x = lib.tensor([1.5, -2.0, 0.0])
        out = call(lib, x)
        return out.tolist(), str(out.dtype).split(".")[-1], out is x

    assert_same(torch, scenario)


def test_meta_is_refused_one_way_not_silently_a_cpu_tensor():
    # torch makes a shapes-only tensor; opgrad has no Meta kernels and says so, the same
    # way wherever a meta tensor would be made
    with pytest.raises(
        NotImplementedError, match="'aten::_to_copy' with arguments from the 'Meta'"
    ):
        og.ones(2).to("meta")
    with pytest.raises(NotImplementedError, match="from the 'Meta' backend"):
        og.tensor([1.0], device="meta")
    with pytest.raises(NotImplementedError, match="from the 'Meta' backend"):
        og.ones(2, device="meta")


FACTORY_DTYPES = [
    ("ones_float", lambda L: L.ones(2, dtype=float)),
    ("zeros_int", lambda L: L.zeros(2, dtype=int)),
    ("full_bool", lambda L: L.full((2,), 1, dtype=bool)),
    ("tensor_float", lambda L: L.tensor([1, 2], dtype=float)),
    ("zeros_like_int", lambda L: L.zeros_like(L.ones(2), dtype=int)),
    ("sum_float", lambda L: L.ones(2).sum(dtype=float)),
    ("new_ones_int", lambda L: L.ones(2).new_ones(2, dtype=int)),
    ("arange_device_cpu", lambda L: L.arange(3, device="cpu")),
    ("eye_device_object", lambda L: L.eye(2, device=L.device("cpu"))),
]


@pytest.mark.parametrize("make", [f[1] for f in FACTORY_DTYPES], ids=[f[0] for f in FACTORY_DTYPES])
def test_python_types_stand_for_dtypes_and_the_cpu_is_accepted(torch, make):
    assert_same(torch, result_scenario(lambda lib, tensor: make(lib)))
