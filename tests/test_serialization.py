"""Serialization against torch 2.13 (issue 16 point 2): pickle, copy and deepcopy of tensors,
and opgrad.save / opgrad.load with torch's zip checkpoint format, read and written both ways
(torch.load of opgrad's files, opgrad.load of torch's)."""

from __future__ import annotations

import copy
import io
import pathlib
import pickle
import zipfile

import numpy as np
import pytest

import opgrad as og

DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _values(lib, dtype_name, shape=(3, 4)):
    a = (np.arange(int(np.prod(shape))).reshape(shape) * 1.5 - 4).astype(np.float64)
    dt = getattr(lib, dtype_name)
    if dtype_name == "bool":
        return lib.tensor(a > 0)
    if dtype_name == "uint8":
        return lib.tensor(np.abs(a)).to(dt)
    return lib.tensor(a).to(dt)


def _meta(t):
    return (
        str(t.dtype).split(".")[-1],
        tuple(t.shape),
        tuple(t.stride()),
        t.storage_offset(),
        t.requires_grad,
    )


def _same(got, expected):
    """``got`` and ``expected`` (one from each library): dtype, shape, strides, storage offset,
    requires_grad and values."""
    assert _meta(got) == _meta(expected)
    g = got.detach().numpy() if hasattr(got, "detach") else got
    e = expected.detach().numpy()
    np.testing.assert_array_equal(np.asarray(g), e)


def _share(a, b) -> bool:
    """Whether two tensors of one library share memory (a write to one shows in the other)."""
    return np.shares_memory(a.detach().numpy(), b.detach().numpy())


# ---- pickle, copy, deepcopy --------------------------------------------------------------


def _pickled(t):
    return pickle.loads(pickle.dumps(t))


COPIERS = {"pickle": _pickled, "copy": copy.copy, "deepcopy": copy.deepcopy}


@pytest.mark.parametrize("how", list(COPIERS))
def test_leaf_with_grad_copies_as_torch(torch, how):
    results = []
    for lib in (og, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        x.grad = lib.ones(2, 2)
        y = COPIERS[how](x)
        results.append((y, x))
        assert (y.grad is not None) == (how == "deepcopy")
        assert y.is_leaf and y.requires_grad
        assert _share(y, x) == (how == "copy")
        assert y._version == 1  # torch's rebuild goes through set_
        if how == "deepcopy":
            assert not _share(y.grad, x.grad)
            _same(y.grad, lib.ones(2, 2)) if lib is torch else None
    _same(results[0][0], results[1][0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_pickles(torch, dtype):
    x = _values(og, dtype)[:, 1:]
    y = _pickled(x)
    _same(y, _values(torch, dtype)[:, 1:])


def test_non_leaf_deepcopy_raises_torchs_error(torch):
    messages = []
    for lib in (og, torch):
        x = lib.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError) as info:
            copy.deepcopy(x)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "Only Tensors created explicitly by the user (graph leaves)" in messages[0]


@pytest.mark.parametrize("how", ["pickle", "copy"])
def test_non_leaf_pickles_and_copies_as_a_leaf(torch, how):
    for lib in (og, torch):
        y = COPIERS[how](lib.ones(2, requires_grad=True) * 2)
        assert y.is_leaf and y.requires_grad and y.grad_fn is None


def test_deepcopy_keeps_views_sharing_memory(torch):
    got = []
    for lib in (og, torch):
        b = lib.arange(10.0)
        out = copy.deepcopy([b, b[2:5], b.view(2, 5).t(), b])
        assert out[3] is out[0]
        out[0][3] = 100.0
        got.append(out)
        assert not _share(out[0], b)
    for g, e in zip(got[0][:3], got[1][:3]):
        _same(g, e)
        assert g._base is None and e._base is None


def test_pickle_gives_each_tensor_its_own_memory_as_torch(torch):
    got = []
    for lib in (og, torch):
        b = lib.arange(10.0)
        out = _pickled([b, b[2:5], b.view(2, 5).t()])
        out[0][3] = 100.0
        got.append(out)
    for g, e in zip(*got):
        _same(g, e)
    assert got[0][1].storage_offset() == 2 and not _share(got[0][0], got[0][1])


def test_deepcopy_memo_keeps_identity_and_grad_sharing():
    x = og.ones(3, requires_grad=True)
    x.grad = og.full((3,), 2.0)
    a, g = copy.deepcopy([x, x.grad])
    assert a.grad is g


class _Sub(og.Tensor):
    pass


class _SubWithNewEmpty(og.Tensor):
    def new_empty(self, *args, **kwargs):
        return super().new_empty(*args, **kwargs).as_subclass(_SubWithNewEmpty)


@pytest.mark.parametrize("how", ["pickle", "copy"])
def test_subclass_keeps_class_and_dict(how):
    s = og.tensor([1.0, 2.0]).as_subclass(_Sub)
    s.foo = {"a": 3}
    r = COPIERS[how](s)
    assert type(r) is _Sub and r.foo == {"a": 3}
    np.testing.assert_array_equal(r.numpy(), [1.0, 2.0])


def test_plain_attributes_survive_copies(torch):
    for lib in (og, torch):
        x = lib.ones(2)
        x.tag = "w"
        for how in COPIERS:
            r = COPIERS[how](x)
            assert r.tag == "w" and type(r) is type(x)


def test_subclass_deepcopy_needs_new_empty_as_torch(torch):
    class TSub(torch.Tensor):
        pass

    with pytest.raises(RuntimeError) as expected:
        copy.deepcopy(torch.ones(2).as_subclass(TSub))
    with pytest.raises(RuntimeError) as got:
        copy.deepcopy(og.ones(2).as_subclass(_Sub))
    assert str(got.value) == str(expected.value)
    s = og.ones(2).as_subclass(_SubWithNewEmpty)
    s.foo = [1]
    r = copy.deepcopy(s)
    assert type(r) is _SubWithNewEmpty and r.foo == [1] and r.foo is not s.foo
    assert not _share(r, s)


# ---- opgrad.save -> torch.load -----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_saved_by_opgrad_loads_in_torch(torch, tmp_path, dtype):
    path = tmp_path / "x.pt"
    og.save(_values(og, dtype), path)
    _same(torch.load(path, weights_only=True), _values(torch, dtype))


def test_opgrad_file_loads_in_torch_with_views_and_containers(torch, tmp_path):
    b = og.arange(12.0).reshape(3, 4)
    w = og.randn(2, 3, requires_grad=True)
    obj = {
        "base": b,
        "t": b.t(),
        "row": b[1],
        "cols": b[:, 1:3],
        "nested": [w, (og.tensor([True, False]), 3, 2.5, "s")],
        "empty": og.zeros(0, 3),
        "scalar": og.tensor(7),
    }
    og.save(obj, str(tmp_path / "d.pt"))
    got = torch.load(tmp_path / "d.pt", weights_only=True)
    tb = torch.arange(12.0).reshape(3, 4)
    _same(got["base"], tb)
    _same(got["t"], tb.t())
    _same(got["row"], tb[1])
    _same(got["cols"], tb[:, 1:3])
    assert got["nested"][0].requires_grad and got["nested"][0].is_leaf
    np.testing.assert_array_equal(got["nested"][0].detach().numpy(), w.detach().numpy())
    assert got["nested"][1][1:] == (3, 2.5, "s")
    # (opgrad's zeros(0, 3) has strides (0, 0) today, a layout matter: torch keeps them)
    assert tuple(got["empty"].shape) == (0, 3) and got["empty"].stride() == obj["empty"].stride()
    _same(got["scalar"], torch.tensor(7))
    # one storage for the views of one tensor, in torch too
    ptr = got["base"].untyped_storage().data_ptr()
    for key in ("t", "row", "cols"):
        assert got[key].untyped_storage().data_ptr() == ptr
    got["base"][1, 1] = -1.0
    assert got["cols"][1, 0].item() == -1.0


def test_opgrad_archive_records_are_torchs(torch, tmp_path):
    og.save({"a": og.ones(3)}, tmp_path / "model.pt")
    torch.save({"a": torch.ones(3)}, tmp_path / "ref.pt")
    ours = zipfile.ZipFile(tmp_path / "model.pt")
    ref = zipfile.ZipFile(tmp_path / "ref.pt")
    strip = lambda z: [n.split("/", 1)[1] for n in z.namelist()]  # noqa: E731
    assert strip(ours) == strip(ref)
    assert ours.namelist()[0].startswith("model/")
    for rel in ("version", "byteorder", ".format_version", ".storage_alignment"):
        assert ours.read(f"model/{rel}") == ref.read(f"ref/{rel}")
    assert ours.read("model/data.pkl") == ref.read("ref/data.pkl")
    raw = (tmp_path / "model.pt").read_bytes()
    for info in ours.infolist():  # every record's data starts on a 64-byte boundary
        name_len, extra_len = np.frombuffer(raw[info.header_offset + 26 :][:4], "<u2")
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0
    buf = io.BytesIO()
    og.save(og.ones(1), buf)
    assert zipfile.ZipFile(buf).namelist()[0].startswith("archive/")


def test_opgrad_file_with_tensor_attributes_loads_in_torch(torch, tmp_path):
    x = og.ones(2)
    x.tag = "w"
    og.save(x, tmp_path / "a.pt")
    y = torch.load(tmp_path / "a.pt", weights_only=True)
    assert type(y) is torch.Tensor and y.tag == "w"


def test_dtypes_and_sizes_in_a_file_are_torchs(torch, tmp_path):
    og.save({"dtype": og.float16, "size": og.Size([2, 3]), "dev": og.device("cpu")}, tmp_path / "m")
    got = torch.load(tmp_path / "m", weights_only=True)
    assert got == {"dtype": torch.float16, "size": torch.Size([2, 3]), "dev": torch.device("cpu")}
    back = og.load(tmp_path / "m")
    assert back == {"dtype": og.float16, "size": og.Size([2, 3]), "dev": og.device("cpu")}
    assert type(back["size"]) is og.Size


# ---- torch.save -> opgrad.load -----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_saved_by_torch_loads_in_opgrad(torch, tmp_path, dtype):
    torch.save(_values(torch, dtype).t(), tmp_path / "x.pt")
    got = og.load(tmp_path / "x.pt")
    assert isinstance(got, og.Tensor)
    _same(got, _values(torch, dtype).t())


def test_torch_containers_and_views_load_in_opgrad(torch, tmp_path):
    b = torch.arange(12.0).reshape(3, 4)
    w = torch.randn(2, 3, requires_grad=True)
    obj = {
        "base": b,
        "t": b.t(),
        "cols": b[:, 1:3],
        "list": [w, 1, 2.5, "s", None, True],
        "tuple": (b[2], {"deep": [b[0, 1:]]}),
    }
    torch.save(obj, tmp_path / "d.pt")
    got = og.load(tmp_path / "d.pt")
    assert type(got) is dict and list(got) == list(obj)
    _same(got["base"], b)
    _same(got["t"], b.t())
    _same(got["cols"], b[:, 1:3])
    _same(got["list"][0], w)
    assert got["list"][0].is_leaf and got["list"][0].requires_grad
    assert got["list"][1:] == [1, 2.5, "s", None, True]
    assert type(got["tuple"]) is tuple
    _same(got["tuple"][0], b[2])
    _same(got["tuple"][1]["deep"][0], b[0, 1:])
    # views of one tensor still share one memory
    got["base"][2, 1] = -5.0
    assert got["t"][1, 2].item() == -5.0 and got["tuple"][0][1].item() == -5.0
    assert all(_share(got["base"], got[k]) for k in ("t", "cols"))
    assert not _share(got["base"], got["list"][0])


def test_torch_ordered_dict_state_loads(torch):
    from collections import OrderedDict

    model = torch.nn.Linear(3, 2)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    got = og.load(buf)
    assert type(got) is OrderedDict and list(got) == ["weight", "bias"]
    for k, v in model.state_dict().items():
        _same(got[k], v)


def test_torch_tensor_with_attributes_loads(torch, tmp_path):
    x = torch.ones(2)
    x.tag = "w"
    torch.save(x, tmp_path / "a.pt")
    y = og.load(tmp_path / "a.pt")
    assert type(y) is og.Tensor and y.tag == "w"


def test_round_trip_shares_between_files_entries(tmp_path):
    b = og.arange(6.0)
    og.save([b, b[1:4]], tmp_path / "r.pt")
    x, v = og.load(tmp_path / "r.pt")
    x[2] = 9.0
    assert v[1].item() == 9.0 and v.storage_offset() == 1


# ---- files, buffers, map_location --------------------------------------------------------


def test_paths_and_buffers(torch, tmp_path):
    x = og.arange(4.0)
    og.save(x, str(tmp_path / "s.pt"))
    og.save(x, pathlib.Path(tmp_path / "p.pt"))
    with open(tmp_path / "f.pt", "wb") as f:
        og.save(x, f)
    buf = io.BytesIO()
    og.save(x, buf)
    for src in ("s.pt", "p.pt", "f.pt"):
        _same(og.load(tmp_path / src), torch.arange(4.0))
        _same(og.load(str(tmp_path / src)), torch.arange(4.0))
        with open(tmp_path / src, "rb") as f:
            _same(og.load(f), torch.arange(4.0))
    buf.seek(0)
    _same(torch.load(buf), torch.arange(4.0))
    buf.seek(0)
    _same(og.load(buf), torch.arange(4.0))


@pytest.mark.parametrize(
    "where",
    ["cpu", "dev", "dict", "callable", "callable_none"],
)
def test_map_location(torch, tmp_path, where):
    torch.save({"a": torch.arange(3.0)}, tmp_path / "m.pt")
    maps = {
        "cpu": lambda lib: "cpu",
        "dev": lambda lib: lib.device("cpu"),
        "dict": lambda lib: {"cpu": "cpu"},
        "callable": lambda lib: (lambda storage, loc: storage),
        "callable_none": lambda lib: (lambda storage, loc: None),
    }
    for lib in (og, torch):
        got = lib.load(tmp_path / "m.pt", map_location=maps[where](lib))
        assert str(got["a"].device) == "cpu"
    _same(og.load(tmp_path / "m.pt", map_location=maps[where](og))["a"], torch.arange(3.0))


def test_map_location_to_cuda_raises_as_cpu_only_torch(tmp_path):
    og.save(og.ones(2), tmp_path / "c.pt")
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        og.load(tmp_path / "c.pt", map_location="cuda:0")


# ---- weights_only ------------------------------------------------------------------------


class Payload:
    def __init__(self):
        self.value = 3


def test_weights_only_refuses_other_globals_as_torch(torch, tmp_path):
    torch.save({"p": Payload()}, tmp_path / "p.pt")
    with pytest.raises(pickle.UnpicklingError) as expected:
        torch.load(tmp_path / "p.pt")
    with pytest.raises(pickle.UnpicklingError) as got:
        og.load(tmp_path / "p.pt")
    for text in (str(expected.value), str(got.value)):
        assert "Weights only load failed" in text
        assert f"Unsupported global: GLOBAL {__name__}.Payload was not an allowed global" in text
    assert str(got.value) == str(expected.value).replace(
        "torch.serialization.", "opgrad.serialization."
    ).replace("Re-running `torch.load`", "Re-running `opgrad.load`")
    # weights_only=False builds it; the allowlist lets weights_only=True build it too
    assert og.load(tmp_path / "p.pt", weights_only=False)["p"].value == 3
    with og.serialization.safe_globals([Payload]):
        assert og.load(tmp_path / "p.pt")["p"].value == 3
    with pytest.raises(pickle.UnpicklingError):
        og.load(tmp_path / "p.pt", weights_only=True)


def test_opgrad_saved_object_refused_by_both_under_weights_only(torch, tmp_path):
    og.save([og.ones(1), Payload()], tmp_path / "o.pt")
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        torch.load(tmp_path / "o.pt")
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        og.load(tmp_path / "o.pt")
    assert torch.load(tmp_path / "o.pt", weights_only=False)[1].value == 3
    assert og.load(tmp_path / "o.pt", weights_only=False)[1].value == 3


def test_explicit_pickle_module_with_weights_only_raises(tmp_path):
    og.save(og.ones(1), tmp_path / "x.pt")
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle"):
        og.load(tmp_path / "x.pt", pickle_module=pickle, weights_only=True)
    _ = og.load(tmp_path / "x.pt", pickle_module=pickle)  # weights_only defaults to False


# ---- bad files ---------------------------------------------------------------------------


def _errors(torch, path, **kwargs):
    out = []
    for lib in (og, torch):
        with pytest.raises(Exception) as info:
            lib.load(path, **kwargs)
        out.append((type(info.value), str(info.value)))
    return out


@pytest.mark.parametrize("weights_only", [True, False])
def test_garbage_file_errors_as_torch(torch, tmp_path, weights_only):
    path = tmp_path / "g.pt"
    path.write_bytes(b"hello world this is garbage")
    ours, theirs = _errors(torch, path, weights_only=weights_only)
    assert ours == theirs


@pytest.mark.parametrize("content", ["empty", "pickled_list", "truncated_zip", "zip_no_version"])
def test_bad_files_error_as_torch(torch, tmp_path, content):
    path = tmp_path / "b.pt"
    if content == "empty":
        path.write_bytes(b"")
    elif content == "pickled_list":
        path.write_bytes(pickle.dumps([1, 2], protocol=2))
    elif content == "truncated_zip":
        buf = io.BytesIO()
        torch.save(torch.ones(3), buf)
        path.write_bytes(buf.getvalue()[:300])
    else:
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("a/other", b"x")
    for weights_only in (True, False):
        ours, theirs = _errors(torch, path, weights_only=weights_only)
        assert ours[0] is theirs[0]
        assert ours[1].split(".")[0] == theirs[1].split(".")[0]


def test_missing_file_raises_file_not_found(torch, tmp_path):
    ours, theirs = _errors(torch, tmp_path / "nope.pt")
    assert ours == theirs and ours[0] is FileNotFoundError


def test_torch_dtype_opgrad_lacks_is_refused(torch, tmp_path):
    torch.save(torch.ones(2, dtype=torch.bfloat16), tmp_path / "bf.pt")
    with pytest.raises(RuntimeError, match="bfloat16"):
        og.load(tmp_path / "bf.pt")


def test_torch_parameter_loads_as_a_leaf_requiring_grad(torch):
    buf = io.BytesIO()
    p = torch.nn.Parameter(torch.randn(2, 3))
    torch.save({"p": p}, buf)
    buf.seek(0)
    got = og.load(buf)["p"]  # opgrad has no nn.Parameter yet: a plain leaf tensor
    assert type(got) is og.Tensor and got.is_leaf and got.requires_grad
    np.testing.assert_array_equal(got.detach().numpy(), p.detach().numpy())


@pytest.mark.parametrize("how", ["pickle", "save", "deepcopy"])
def test_hooks_are_not_saved_and_warn_as_torch(torch, how):
    import warnings

    def run(lib):
        x = lib.ones(3, requires_grad=True)
        x.register_hook(lambda g: g * 2)
        quiet = lib.ones(3, requires_grad=True)
        quiet.register_hook(lib.utils.hooks.unserializable_hook(lambda g: g))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for t in (x, quiet, x * 1):
                if how == "pickle":
                    pickle.dumps(t)
                elif how == "save":
                    lib.save(t, io.BytesIO())
                elif t.is_leaf:
                    copy.deepcopy(t)
        return [str(w.message).split(" at 0x")[0] for w in caught]

    import opgrad.utils.hooks  # noqa: F401

    ours, theirs = run(og), run(torch)
    assert len(ours) == len(theirs) == (0 if how == "deepcopy" else 1)
    assert [m.replace("opgrad", "torch") for m in ours] == theirs


def test_torch_function_sees_deepcopy_and_reduce_of_subclasses_as_torch(torch):
    def run(lib):
        seen = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(getattr(func, "__name__", str(func)))
                return super().__torch_function__(func, types, args, kwargs or {})

            def new_empty(self, *args, **kwargs):
                return super().new_empty(*args, **kwargs).as_subclass(Logged)

        s = lib.ones(2).as_subclass(Logged)
        seen.clear()
        copy.copy(s)
        reduce_calls = seen.count("__reduce_ex__")
        seen.clear()
        r = copy.deepcopy(s)
        return reduce_calls, "__deepcopy__" in seen, type(r).__name__

    assert run(og) == run(torch)


def test_legacy_format_is_refused(tmp_path):
    with pytest.raises(NotImplementedError, match="zip format only"):
        og.save(og.ones(1), tmp_path / "l.pt", _use_new_zipfile_serialization=False)
    og.save(og.ones(1), tmp_path / "n.pt", _disable_byteorder_record=True)
    assert not any(n.endswith("byteorder") for n in zipfile.ZipFile(tmp_path / "n.pt").namelist())
    assert og.load(tmp_path / "n.pt").tolist() == [1.0]


def test_wrapper_subclass_deepcopy_needs_clone_as_torch(torch):
    def run(lib):
        class Wrapper(lib.Tensor):
            @staticmethod
            def __new__(cls, inner):
                return lib.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)

            def __init__(self, inner):
                self.inner = inner

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                args = [a.inner if isinstance(a, Wrapper) else a for a in args]
                return func(*args, **(kwargs or {}))

        with pytest.raises(RuntimeError) as info:
            copy.deepcopy(Wrapper(lib.ones(2)))
        return str(info.value)

    assert run(og) == run(torch)
    assert "for wrapper subclasses only works for subclass types that implement clone()" in run(og)


def test_copies_leave_the_tensor_class_unchanged():
    before = dict(vars(og.Tensor))
    x = og.ones(2)
    x.tag = 1
    for how in COPIERS:
        COPIERS[how](x)
    og.save(x, io.BytesIO())
    assert dict(vars(og.Tensor)) == before
