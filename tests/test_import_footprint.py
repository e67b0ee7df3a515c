"""What ``import opgrad`` leaves behind: built-in ops' schemas are parsed on first use, so
that the thousands of objects a parsed schema is made of exist only for the ops a process
calls (each GC-tracked object is one more that every full garbage collection walks, which
long graphs pay for: issue 12's chain case)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import opgrad as og
from opgrad import dispatcher
from opgrad.schema import parse_schema

#: at most this share of the built-in overloads has its schema parsed by the import
MAX_PARSED_SHARE = 0.05


def test_the_import_parses_few_schemas():
    code = textwrap.dedent("""
        import opgrad
        from opgrad import dispatcher
        ops = [
            op
            for packet in vars(dispatcher.ops.aten).values()
            if isinstance(packet, dispatcher.OpOverloadPacket)
            for op in (getattr(packet, name) for name in packet.overloads())
        ]
        print(len(ops), sum("_schema" in vars(op) for op in ops))
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    total, parsed = map(int, out.stdout.split())
    assert total > 500
    assert parsed <= MAX_PARSED_SHARE * total, (parsed, total)


def test_a_schema_parsed_on_first_use_is_the_declared_one():
    op = og.ops.aten.unbind_copy.int_out
    text = "aten::unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()"
    assert str(op._schema) == str(parse_schema(text))
    assert [a.name for a in op._positional] == ["self", "dim"]
    assert [a.name for a in op._kwarg_only] == ["out"] and op._list_positions == {2}
    assert op.name() == "aten::unbind_copy.int_out" and op.__name__ == "unbind_copy.int_out"


def test_an_overload_still_lacks_what_it_never_had():
    op = og.ops.aten.mul.Tensor
    try:
        op.no_such_attribute
    except AttributeError as error:
        assert "no_such_attribute" in str(error)
    else:
        raise AssertionError("an unknown attribute was found")
    assert op._schema.base_name == "mul"  # and the schema is still reachable afterwards


def test_several_returns_are_known_without_parsing():
    fresh = dispatcher.OpOverload(
        og.ops.aten.max,
        "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> "
        "(Tensor values, Tensor indices)",
    )
    assert dispatcher.declares_several_returns(fresh) and "_schema" not in vars(fresh)
    single = dispatcher.OpOverload(og.ops.aten.neg, "aten::neg(Tensor self) -> Tensor")
    assert not dispatcher.declares_several_returns(single) and "_schema" not in vars(single)
    assert og.max(og.tensor([[1.0, 3.0]]), 1).indices.tolist() == [1]  # the named tuple
