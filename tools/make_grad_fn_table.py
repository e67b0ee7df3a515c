"""Read the grad_fn table off PyTorch: tests/data/torch_grad_fn_table.json.

For each expression below, evaluated by torch on the inputs of INPUTS under a
logging TorchDispatchMode, the table records the grad_fn class, the aten op that
made it, every aten op the mode saw, every ``_saved_*`` / ``_raw_saved_*``
attribute (type, a short repr, and which input it is, when it is one) and
``next_functions``. tests/test_grad_fn_table.py checks opgrad against it without
needing PyTorch.

Usage:  python tools/make_grad_fn_table.py [--check]   (needs torch==2.13.0)

``--check`` compares what torch gives now with the file instead of writing it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "torch_grad_fn_table.json"

EXPRESSIONS = [
    "x + y",
    "x + 2",
    "x - y",
    "x * y",
    "x * 2",
    "x / y",
    "x / 2",
    "-x",
    "x.exp()",
    "p.log()",
    "x.sin()",
    "x.cos()",
    "x.tanh()",
    "x.sigmoid()",
    "x.relu()",
    "x ** 2",
    "x ** y",
    "2 ** x",
    "p.sqrt()",
    "x.abs()",
    "x.clamp(-0.5, 0.5)",
    "x.clamp(min=0)",
    "torch.where(x > 0, x, y)",
    "torch.maximum(x, y)",
    "x.sum()",
    "x.sum(dim=1)",
    "x.sum(1, keepdim=True)",
    "x.mean()",
    "x.mean(dim=0)",
    "x.max()",
    "x.max(dim=1)[0]",
    "x.min(dim=1).values",
    "x.prod()",
    "x.prod(dim=1)",
    "x.var()",
    "x.var(dim=1)",
    "x.std()",
    "x.logsumexp(dim=1)",
    "x.softmax(dim=1)",
    "x.log_softmax(dim=1)",
    "torch.mm(x, w)",
    "torch.matmul(x, w)",
    "torch.matmul(v, v2)",
    "torch.bmm(b1, b2)",
    "torch.addmm(bias, x, w)",
    "torch.dot(v, v2)",
    "x.t()",
    "x.transpose(0, 1)",
    "b1.permute(2, 0, 1)",
    "x.view(6)",
    "x.reshape(3, 2)",
    "x.t().reshape(6)",
    "v.expand(4, 3)",
    "z.squeeze()",
    "x.unsqueeze(0)",
    "x[0]",
    "x[:, 1:3]",
    "x[:, ::2]",
    "x[idx]",
    "x[mask]",
    "x.narrow(1, 0, 2)",
    "torch.cat([x, y])",
    "torch.stack([x, y])",
    "x.split(1, dim=1)[0]",
    "x.split([1, 2], dim=1)[1]",
    "x.chunk(3, dim=1)[2]",
    "x.unbind(0)[0]",
    "x.diagonal()",
    "x.gather(1, gidx)",
    "x.scatter(1, gidx, y)",
    "x.masked_fill(mask, 0.0)",
    "x.clone().index_put_((idx,), y[0])",
    "x.clone()",
    "x.detach()",
    "x.to(torch.float64)",
    "x.double()",
    "F.linear(x, w.t(), bias3)",
    "F.linear(x, w.t())",
    "F.conv2d(img, ker, kb, padding=1)",
    "F.cross_entropy(logits, tgt)",
    "F.nll_loss(logits.log_softmax(1), tgt)",
    "F.mse_loss(x, y)",
    "F.layer_norm(x, (3,))",
    "F.layer_norm(x, (3,), lnw, lnb)",
    "F.dropout(x, 0.5, training=True)",
    "F.embedding(eidx, emb)",
    "x.clone().mul_(2)",
    "x.clone().add_(y)",
    "x.exp().sum()",
    "x.flatten()",
    "x.sub(y, alpha=2)",
    "x.sign()",
    "x.floor()",
    "torch.einsum('ij,jk->ik', x, w)",
    "x.norm()",
    "F.gelu(x)",
    "F.silu(x)",
    "x.atan2(y)",
    "x.index_select(0, idx)",
    "x.repeat(2, 1)",
    "x.flip(0)",
    "x.roll(1, 0)",
    "x.cumsum(1)",
    "x.sort(1)[0]",
    "x.topk(2, 1)[0]",
    "x.amax(1)",
    "x.square()",
    "x.rsqrt()",
    "x.expand_as(y)",
    "x.T",
    "x.mT",
    "torch.tril(x)",
    "x.lerp(y, 0.3)",
    "torch.addcmul(x, x, y, value=0.5)",
]

SETUP = {
    "torch_version": None,  # filled in from the torch that made the table
    "inputs": (
        "torch.manual_seed(0); x,y=randn(2,3,rg); p=rand(2,3)+0.5 (rg); w=randn(3,4,rg); "
        "v,v2=randn(3,rg); b1=randn(2,3,4,rg); b2=randn(2,4,5,rg); bias=randn(2,4,rg); "
        "bias3=randn(4,rg); z=randn(1,3,1,rg); idx=tensor([1,0]); mask=2x3 bool; "
        "gidx=tensor([[0,2],[1,0]]); img=randn(1,2,5,5,rg); ker=randn(3,2,3,3,rg); "
        "kb=randn(3,rg); logits=randn(4,5,rg); tgt=tensor([0,2,4,1]); lnw,lnb=randn(3,rg); "
        "emb=randn(10,3,rg); eidx=tensor([[1,2],[4,9]]); F=torch.nn.functional; "
        "rg=requires_grad=True"
    ),
    "fields": (
        "grad_fn: type(out.grad_fn).__name__; aten_op: the aten op whose autograd kernel "
        "created grad_fn (last non-detach op seen by a TorchDispatchMode); aten_ops_seen: "
        "every aten op the mode saw while evaluating the expression (aten.detach.default "
        "after an op = SavedVariable saving an output); attrs: every _saved_*/_raw_saved_* "
        "attribute -> {type, repr, is: name of the input object it is identical to (python "
        "`is`), if any}; next_functions: (node class name or None, input_nr)"
    ),
    "notes": (
        "negative ints are returned as unsigned 64-bit (e.g. -1 -> 18446744073709551615, "
        "ignore_index=-100 -> 18446744073709551516) because the generated getters use "
        "PyLong_FromUnsignedLong; _saved_<out> for outputs returns a NEW tensor object "
        "(equal values, grad_fn = the node) while _saved_<input> returns the identical "
        "input object."
    ),
}


def make_inputs(torch) -> dict:
    """The inputs INPUTS describes, by name."""
    torch.manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, requires_grad=True)

    names = {}
    names["x"], names["y"] = randn(2, 3), randn(2, 3)
    names["p"] = (torch.rand(2, 3) + 0.5).requires_grad_()
    names["w"] = randn(3, 4)
    names["v"], names["v2"] = randn(3), randn(3)
    names["b1"], names["b2"] = randn(2, 3, 4), randn(2, 4, 5)
    names["bias"], names["bias3"] = randn(2, 4), randn(4)
    names["z"] = randn(1, 3, 1)
    names["idx"] = torch.tensor([1, 0])
    names["mask"] = torch.tensor([[True, False, True], [False, True, False]])
    names["gidx"] = torch.tensor([[0, 2], [1, 0]])
    names["img"], names["ker"], names["kb"] = randn(1, 2, 5, 5), randn(3, 2, 3, 3), randn(3)
    names["logits"] = randn(4, 5)
    names["tgt"] = torch.tensor([0, 2, 4, 1])
    names["lnw"], names["lnb"] = randn(3), randn(3)
    names["emb"] = randn(10, 3)
    names["eidx"] = torch.tensor([[1, 2], [4, 9]])
    return names


def describe(torch, value) -> str:
    """A short repr: tensors by shape and dtype, saved-tensor handles by type."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).replace("torch.", "")
        flag = ", requires_grad" if value.requires_grad else ""
        return f"Tensor(shape={tuple(value.shape)}, dtype={dtype}{flag})"
    if type(value).__name__ == "SavedTensor":
        return "SavedTensor"
    if (
        isinstance(value, tuple)
        and value
        and all(isinstance(v, torch.Tensor) or type(v).__name__ == "SavedTensor" for v in value)
    ):
        return f"tuple[{', '.join(describe(torch, v) for v in value)}]"
    return repr(value)


def record(torch, expression: str, inputs: dict) -> dict:
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Logging(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    scope = dict(inputs, torch=torch, F=torch.nn.functional)
    with Logging():
        out = eval(expression, scope)  # noqa: S307 - the expressions above, nothing else
    node = out.grad_fn
    entry = {
        "grad_fn": None if node is None else type(node).__name__,
        "aten_op": None,
        "aten_ops_seen": seen,
        "attrs": {},
        "next_functions": None,
    }
    if node is None:
        return entry
    entry["aten_op"] = [op for op in seen if op != "aten.detach.default"][-1]
    for name in sorted(n for n in dir(node) if n.startswith(("_saved_", "_raw_saved_"))):
        value = getattr(node, name)
        attr = {"type": type(value).__name__, "repr": describe(torch, value)}
        same = [key for key, given in inputs.items() if given is value]
        if same:
            attr["is"] = same[0]
        entry["attrs"][name] = attr
    entry["next_functions"] = [
        [None if fn is None else type(fn).__name__, nr] for fn, nr in node.next_functions
    ]
    return entry


def make_table(torch) -> dict:
    inputs = make_inputs(torch)
    table = {"_setup": dict(SETUP, torch_version=torch.__version__)}
    for expression in EXPRESSIONS:
        table[expression] = record(torch, expression, inputs)
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    arguments = parser.parse_args()
    import torch

    if not torch.__version__.startswith("2.13.0"):
        print(f"the table is read off torch 2.13.0, not {torch.__version__}", file=sys.stderr)
        return 2
    text = json.dumps(make_table(torch), indent=1)
    if arguments.check:
        if TABLE.read_text() != text:
            print(f"{TABLE} differs from what torch gives now", file=sys.stderr)
            return 1
        print(f"{TABLE} is what torch gives")
        return 0
    TABLE.parent.mkdir(exist_ok=True)
    TABLE.write_text(text)
    print(f"wrote {len(EXPRESSIONS)} expressions to {TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
