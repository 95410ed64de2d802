"""CRV026: a sparse tensor in compiled code.

    support = torch.mm(x, self.weight)
    out = torch.spmm(adj, support)      # CRV026: a sparse matrix product (adj is sparse)
    a = dense.to_sparse()               # CRV026
    b = torch.sparse.mm(a, x)           # CRV026

`check_call` finds the calls that make or take sparse tensors by name: `torch.sparse.*`,
`torch.spmm`, `torch.sparse_coo_tensor` / `torch.sparse_csr_tensor` ..., and the `.to_sparse*()`
methods. A sparse tensor passed in from outside without such a call is not seen.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, method_name, receiver_is_numpy
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV026", "sparse-tensor", "sparse tensor in compiled code",
    "Dynamo does not trace sparse tensors (\"Attempted to wrap sparse Tensor\"): a function that receives one "
    "is skipped whole, and a sparse tensor made inside compiled code breaks the graph there.",
    "Keep the sparse operation outside the compiled function (compile the dense layers around it), or use a "
    "dense adjacency matrix when it is small.",
    Strategy.DONT_COMPILE, skips_frame=True,
    what="Flags `torch.spmm`, the functions of `torch.sparse`, the sparse tensor constructors "
         "(`torch.sparse_coo_tensor`, ...) and the `.to_sparse()` family of tensor methods.",
    why="Sparse layouts have no fake-tensor support in Dynamo, so it cannot trace an operation on one: the frame "
        "that receives a sparse tensor runs eagerly, with none of its tensor work compiled.",
    bad_example="def forward(self, x, adj):\n    return torch.spmm(adj, x @ self.weight)",
    good_example="def forward(self, x, adj):\n    return adj @ (x @ self.weight)  # a dense adj",
    known_problems="Found by name: a sparse tensor that reaches compiled code without one of these calls in it "
                   "(passed in as an argument, `adj @ x` on a sparse `adj`) is missed, and `torch.sparse` "
                   "functions that also accept dense tensors are flagged.",
    fix_safety="No automatic fix. The compiler runs the statement eagerly between two graphs.",
)

SPARSE_FUNCTIONS = frozenset({
    "torch.spmm", "torch.sparse_coo_tensor", "torch.sparse_csr_tensor", "torch.sparse_csc_tensor",
    "torch.sparse_bsr_tensor", "torch.sparse_bsc_tensor", "torch.sparse_compressed_tensor", "torch.hspmm",
    "torch.smm", "torch.sspaddmm",
})
SPARSE_METHODS = frozenset({"to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
                            "to_sparse_bsc"})


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func) or ""
    if name in SPARSE_FUNCTIONS or name.startswith("torch.sparse."):
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() works on sparse tensors, which torch.compile does not trace")
    elif method_name(call) in SPARSE_METHODS and not receiver_is_numpy(call, ctx):
        yield Violation(RULE.code, f".{method_name(call)}() makes a sparse tensor, which torch.compile does not trace")
