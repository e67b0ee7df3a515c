"""Memory formats against PyTorch: the strides a copy, conversion or ``*_like`` gets.

``opgrad.preserve_format`` (the default) keeps a dense input's strides and gives any
other input dense strides in its dim order; ``contiguous_format`` is row-major;
``channels_last`` and ``channels_last_3d`` put the channel dim innermost (4-d and 5-d
only). ``to()`` and ``contiguous()`` return self when it already is laid out as asked.
"""

import pickle

import pytest

import opgrad as og
from torch_oracle import assert_same, message


def dense_permuted(lib):
    """(2, 4, 5, 3): a row-major (2, 3, 4, 5) tensor with its channel dim moved last."""
    return lib.arange(120.0).reshape(2, 3, 4, 5).permute(0, 2, 3, 1)


def not_dense_permuted(lib):
    """(5, 2, 3, 4): every other element of the last dim, which then moves first."""
    return lib.arange(240.0).reshape(2, 3, 4, 10)[..., ::2].permute(3, 0, 1, 2)


def channels_last_tensor(lib):
    return lib.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)


INPUTS = {
    "contiguous": lambda lib: lib.arange(120.0).reshape(2, 3, 4, 5),
    "dense permuted": dense_permuted,
    "not dense permuted": not_dense_permuted,
    "channels last": channels_last_tensor,
    "transposed matrix": lambda lib: lib.arange(12.0).reshape(3, 4).t(),
    "expanded": lambda lib: lib.arange(4.0).reshape(1, 4).expand(3, 4),
    "empty with odd strides": lambda lib: lib.zeros(40).as_strided((2, 0, 3), (1, 7, 2)),
}
FORMATS = ["preserve_format", "contiguous_format", "channels_last", "channels_last_3d"]


def layout(t):
    return tuple(t.shape), tuple(t.stride()), str(t.dtype).rsplit(".", 1)[-1], t.tolist()


def outcome_of(fn):
    """The layout of ``fn()``'s tensor (or its value), or its exception's type and text."""
    try:
        result = fn()
    except (RuntimeError, TypeError) as exc:
        return type(exc).__name__, message(exc)
    return layout(result) if hasattr(result, "stride") else result


def test_memory_formats_print_and_pickle_as_torch_names_them(torch):
    for name in FORMATS:
        fmt = getattr(og, name)
        assert repr(fmt) == str(fmt) == repr(getattr(torch, name)).replace("torch", "opgrad")
        assert isinstance(fmt, og.memory_format)
        assert pickle.loads(pickle.dumps(fmt)) is fmt


@pytest.mark.parametrize("make", INPUTS.values(), ids=INPUTS.keys())
@pytest.mark.parametrize("fmt", [None] + FORMATS)
@pytest.mark.parametrize("convert", ["double", "half", "long"])
def test_dtype_conversion_lays_out_as_torch(torch, make, fmt, convert):
    def scenario(lib):
        kwargs = {} if fmt is None else {"memory_format": getattr(lib, fmt)}
        return outcome_of(lambda: getattr(make(lib), convert)(**kwargs))

    assert_same(torch, scenario)


@pytest.mark.parametrize("make", INPUTS.values(), ids=INPUTS.keys())
@pytest.mark.parametrize("fmt", FORMATS)
def test_to_returns_self_only_when_already_laid_out_so(torch, make, fmt):
    """to() without a dtype copies only when self's strides do not follow the format
    (a transposed matrix follows contiguous_format, as PyTorch decides)."""

    def scenario(lib):
        x = make(lib)
        return outcome_of(
            lambda: (lambda y: (y is x, layout(y)))(x.to(memory_format=getattr(lib, fmt)))
        )

    assert_same(torch, scenario)


@pytest.mark.parametrize("make", INPUTS.values(), ids=INPUTS.keys())
@pytest.mark.parametrize("fmt", FORMATS)
def test_contiguous_in_a_memory_format(torch, make, fmt):
    def scenario(lib):
        x = make(lib)
        fmt_ = getattr(lib, fmt)
        return (
            outcome_of(lambda: x.is_contiguous(memory_format=fmt_)),
            outcome_of(lambda: (lambda y: (y is x, layout(y)))(x.contiguous(memory_format=fmt_))),
        )

    assert_same(torch, scenario)


@pytest.mark.parametrize("make", INPUTS.values(), ids=INPUTS.keys())
@pytest.mark.parametrize("fmt", FORMATS[1:])
def test_clone_to_a_memory_format(torch, make, fmt):
    def scenario(lib):
        return outcome_of(lambda: make(lib).clone(memory_format=getattr(lib, fmt)))

    assert_same(torch, scenario)


@pytest.mark.parametrize("make", INPUTS.values(), ids=INPUTS.keys())
@pytest.mark.parametrize("fmt", [None] + FORMATS)
@pytest.mark.parametrize("factory", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_factories_lay_out_as_torch(torch, make, fmt, factory):
    def scenario(lib):
        kwargs = {} if fmt is None else {"memory_format": getattr(lib, fmt)}
        args = (2.5,) if factory == "full_like" else ()
        made = lambda: getattr(lib, factory)(make(lib), *args, **kwargs)  # noqa: E731
        result = outcome_of(made)
        if factory == "empty_like" and isinstance(result[-1], list):
            return result[:-1]  # empty_like's values are whatever memory held
        return result

    assert_same(torch, scenario)


@pytest.mark.parametrize("fn", ["rand_like", "randn_like"])
@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_random_like_in_a_memory_format_fills_in_memory_order(torch, fn, fmt):
    def scenario(lib):
        lib.manual_seed(3)
        out = getattr(lib, fn)(dense_permuted(lib), memory_format=getattr(lib, fmt))
        return layout(out)

    assert_same(torch, scenario)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 1, 4), (2, 3, 4), (2, 3, 4, 5, 6)])
@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_in_a_memory_format(torch, shape, fmt):
    def scenario(lib):
        made = outcome_of(lambda: lib.empty(shape, memory_format=getattr(lib, fmt)))
        return made[:-1] if isinstance(made[-1], list) else made

    assert_same(torch, scenario)


def test_empty_with_no_elements_in_channels_last(torch):
    def scenario(lib):
        return [
            lib.empty(shape, memory_format=lib.channels_last).stride()
            for shape in ((2, 0, 4, 5), (2, 3, 0, 4), (0, 3, 4, 5))
        ]

    assert_same(torch, scenario)


BAD_ARGUMENTS = {
    "to": lambda lib, x: x.to(memory_format="channels_last"),
    "to with a dtype": lambda lib, x: x.to(lib.float64, memory_format=3),
    "double": lambda lib, x: x.double(memory_format="channels_last"),
    "contiguous": lambda lib, x: x.contiguous(memory_format=None),
    "is_contiguous": lambda lib, x: x.is_contiguous(memory_format=None),
    "empty": lambda lib, x: lib.empty(2, memory_format="channels_last"),
    "zeros_like": lambda lib, x: lib.zeros_like(x, memory_format=lib.float32),
    "full_like": lambda lib, x: lib.full_like(x, 1, memory_format="channels_last"),
    "zeros takes none": lambda lib, x: lib.zeros(2, memory_format=lib.contiguous_format),
}


@pytest.mark.parametrize("call", BAD_ARGUMENTS.values(), ids=BAD_ARGUMENTS.keys())
def test_a_bad_memory_format_argument_raises_as_in_torch(torch, call):
    def scenario(lib):
        return outcome_of(lambda: call(lib, lib.ones(2, 3)))

    assert_same(torch, scenario)


def test_an_op_refuses_what_is_no_memory_format(torch):
    # torch's text starts "clone(): "; an op's kernel, which raises here, knows no op name
    expected = outcome_of(lambda: torch.ones(2).clone(memory_format="channels_last"))
    got = outcome_of(lambda: og.ones(2).clone(memory_format="channels_last"))
    assert got[0] == expected[0] == "TypeError"
    assert got[1] in expected[1]


def test_contiguous_copies_through_clone_in_contiguous_format(torch):
    """What a dispatch mode sees: clone with memory_format=contiguous_format, as in torch."""

    def scenario(lib):
        seen = []

        class Log(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append((str(func), repr((kwargs or {}).get("memory_format"))))
                return func(*args, **(kwargs or {}))

        x = lib.ones(3, 4).t()
        with Log():
            x.contiguous()
        return [(f, m.replace("torch", "opgrad")) for f, m in seen]

    assert_same(torch, scenario)
