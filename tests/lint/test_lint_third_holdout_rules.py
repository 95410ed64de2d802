"""The checks the third held-out real-code corpus (tests/lint_corpus_real_holdout3: d2l, timm,
torch-optimizer, pytorch-crf, lucidrains' EMA and Lion, pytorch-msssim) led to, each on a small
example, each behaviour first checked with `torch._dynamo.explain` on torch 2.13 (docs/lint.md)."""

import textwrap

from carve.rewriters.lint import LintConfig, lint_source

HEADER = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"


def codes(text, **config):
    source = HEADER + textwrap.dedent(text).lstrip("\n")
    result = lint_source(source, "m.py", LintConfig(**config))
    assert result.error is None, result.error
    return [(f.code, f.line - HEADER.count("\n")) for f in result.findings]


# -- CRV009: repeat_interleave with Python-int repeats, nonzero without fullgraph -----------------


def test_repeat_interleave_breaks_only_when_its_repeats_are_a_tensor():
    # explain: repeats an int -> one graph; repeats a tensor -> "Dynamic shape operator"
    assert codes("""
        @torch.compile
        def f(x, valid_lens, heads):
            y = x * 2
            a = torch.repeat_interleave(valid_lens, y.shape[1])
            b = torch.repeat_interleave(valid_lens, repeats=heads, dim=0)
            c = y.repeat_interleave(3, dim=0)
            counts = (y.abs() * 3).long()
            d = torch.repeat_interleave(y, counts)
            e = y.repeat_interleave(counts)
            return a, b, c, d, e, torch.repeat_interleave(counts)
    """) == [("CRV009", 8), ("CRV009", 9), ("CRV009", 10)]


def test_nonzero_after_tensor_work_is_a_break_without_fullgraph_and_traced_under_it():
    # explain: `y.nonzero()` after `x * 2` -> two graphs, "Dynamic shape operator"; fullgraph=True: one graph
    source = """
        @torch.compile{options}
        def f(x):
            y = x * 2
            idx = torch.nonzero(y > 0)
            return idx + 1
    """
    assert codes(source.format(options="")) == [("CRV009", 4)]
    assert codes(source.format(options="(fullgraph=True)")) == []
    assert codes(source.format(options="(fullgraph=True)"), extend_select=["CRV021"]) == [("CRV021", 4)]
    # first thing in the function, it splits no graph
    assert codes("""
        @torch.compile
        def f(x):
            idx = x.nonzero()
            return idx.sum()
    """, extend_select=["CRV027"]) == [("CRV027", 3)]


def test_nonzero_in_a_loop_skips_the_frame():
    assert codes("""
        @torch.compile
        def nms(boxes, scores):
            order = torch.argsort(scores, descending=True)
            keep = []
            while order.numel() > 0:
                keep.append(order[0])
                inds = torch.nonzero(boxes[order] > 0.5).reshape(-1)
                order = order[inds + 1]
            return keep
    """) == [("CRV006", 5), ("CRV009", 7)]


# -- CRV027: what a comprehension iterates is evaluated before its element ---------------------


def test_a_conversion_of_the_elements_of_a_tensor_a_comprehension_makes_is_a_break():
    # explain: `[x.item() for x in torch.linspace(0, 0.1, 4)]` -> "Unsupported Tensor.item() call" after the
    # linspace graph op; so for an input tensor (iterating it selects its rows in the graph first)
    assert codes("""
        @torch.compile
        def rates(depth):
            return [x.item() for x in torch.linspace(0, 0.1, depth)]
    """) == [("CRV004", 3)]
    assert codes("""
        @torch.compile
        def rates(values: torch.Tensor):
            return [x.item() for x in values]
    """) == [("CRV004", 3)]
    # a conversion of what the comprehension iterates is still evaluated first
    assert codes("""
        @torch.compile
        def rates(values: torch.Tensor):
            return [v * 2 for v in values.tolist()]
    """, extend_select=["CRV027"]) == [("CRV027", 3)]


# -- CRV013: building a dataset or a loader of torch.utils.data --------------------------------


def test_building_a_data_loader_in_compiled_code_is_crv013():
    # explain: TensorDataset(...) / DataLoader(...) after a graph op -> "Attempted to inline function marked as skipped"
    assert codes("""
        from torch.utils.data import DataLoader

        @torch.compile
        def loader(x, y):
            x, y = x * 2, y + 1
            dataset = torch.utils.data.TensorDataset(x, y)
            return DataLoader(dataset, 32, shuffle=True)
    """) == [("CRV013", 6), ("CRV013", 7)]


def test_a_loop_over_a_data_loader_is_crv013_and_skips_the_frame():
    # explain: `for x, y in train_loader:` in the compiled function -> WON'T CONVERT (the frame runs eagerly)
    assert codes("""
        @torch.compile
        def epoch(model, train_loader):
            total = 0.0
            for x, y in train_loader:
                total = total + F.mse_loss(model(x), y)
            return total
    """) == [("CRV013", 4)]
    assert codes("""
        @torch.compile
        def epoch(model, batches):
            total = 0.0
            for x, y in batches:
                total = total + F.mse_loss(model(x), y)
            return total
    """) == []


# -- a module bound to a name of its own (`d2l = sys.modules[__name__]`) --------------------------

SELF_ALIAS = """
import sys

nn_Module = nn.Module
d2l = sys.modules[__name__]


class RNN(d2l.nn_Module):
    def __init__(self, num_inputs, num_hiddens):
        super().__init__()
        self.rnn = nn.GRU(num_inputs, num_hiddens)

    def forward(self, inputs, H=None):
        return self.rnn(inputs, H)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        self.rnn = d2l.RNN(4, 8)

    def forward(self, X):
        return self.rnn(self.embedding(X))


def accuracy(y_hat, y):
    cmp = y_hat.argmax(axis=1).type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


@torch.compile
def evaluate(net, X, y):
    return d2l.accuracy(net(X), y) / y.numel()


encoder = torch.compile(Encoder())
"""


def test_the_names_of_a_module_bound_to_itself_are_its_own_definitions():
    # RNN.forward (a subclass of nn.Module through `d2l.nn_Module`) runs a GRU; Encoder.forward calls
    # d2l.RNN's forward; evaluate calls d2l.accuracy, which is accuracy, which converts with float()
    expected = [("CRV024", 13), ("CRV016", 23), ("CRV004", 28), ("CRV016", 33)]
    assert codes(SELF_ALIAS) == expected
    assert codes(SELF_ALIAS.replace("d2l.", "")) == expected


def test_a_module_level_alias_of_an_imported_name_resolves_to_it():
    from carve.rewriters.names import dotted_name
    from carve.rewriters.walk import import_table
    import libcst as cst

    module = cst.parse_module("import sys\nfrom torch import nn\nnn_Module = nn.Module\nme = sys.modules[__name__]\n"
                              "x = me.nn_Module\n")
    imports = import_table(module)
    assert imports.qualify("nn_Module") == "torch.nn.Module"
    assert imports.self_aliases == {"me"}
    value = module.body[-1].body[0].value
    assert imports.qualify(dotted_name(value)) == "torch.nn.Module"


def test_a_comprehension_with_a_condition_is_read_in_order():
    assert codes("""
        @torch.compile
        def rates(values: torch.Tensor):
            return [x.item() for x in values if x > 0]
    """) == [("CRV004", 3)]


# -- CRV031: NumPy random draws ------------------------------------------------------------------


def test_numpy_random_draws_of_one_number_and_untranslated_distributions_are_crv031():
    # explain after a graph op: np.random.rand() / randint(0, 5) / randint(..., size=None) -> "Data dependent
    # operator"; np.random.beta / permutation -> "attempted to trace numpy function unsupported by PyTorch";
    # np.random.rand(4) / randint(0, 5, size=3) -> traced
    assert codes("""
        import numpy as np

        @torch.compile
        def mix(x, alpha, count=None):
            y = x * 2
            a = np.random.rand()
            b = np.random.randint(0, 5)
            c = np.random.randint(0, 5, size=count)
            d = np.random.beta(alpha, alpha)
            e = np.random.permutation(4)
            f = np.random.rand(4)
            g = np.random.randint(0, 5, size=3)
            return y, a, b, c, d, e, f, g
    """) == [("CRV031", 6), ("CRV031", 7), ("CRV031", 8), ("CRV031", 9), ("CRV031", 10)]


def test_numpy_work_before_a_draw_makes_it_a_break_and_a_draw_first_is_not():
    source = """
        import numpy as np

        @torch.compile
        def rand_bbox(shape, lam, count=None):
            {first}
            cy = np.random.randint(0, shape[-2], size=count)
            return cy
    """
    assert codes(source.format(first="ratio = np.sqrt(1 - lam)")) == [("CRV031", 6)]
    assert codes(source.format(first="draw = np.random.rand()"), extend_select=["CRV027"]) == [
        ("CRV027", 5), ("CRV027", 6)]


# -- CRV032: .grad after an augmented assignment -------------------------------------------------


def test_grad_after_an_augmented_assignment_is_crv032_and_a_method_update_is_not():
    # explain: `p -= lr * p.grad; p.grad.zero_()` -> WON'T CONVERT (ObservedAttributeError 'zero_'), no graph;
    # `p.sub_(lr * p.grad)` and `p.data -= lr * p.grad` then `p.grad.zero_()` -> one graph
    assert codes("""
        @torch.compile
        def sgd(params, lr, batch_size):
            with torch.no_grad():
                for param in params:
                    param -= lr * param.grad / batch_size
                    param.grad.zero_()
    """) == [("CRV006", 4), ("CRV032", 6)]
    for update in ("param.sub_(lr * param.grad)", "param.data -= lr * param.grad"):
        assert codes(f"""
            @torch.compile
            def sgd(params, lr):
                with torch.no_grad():
                    for param in params:
                        {update}
                        param.grad.zero_()
        """) == []
    # explain: `a -= lr * a.grad; a.grad = None` (PyTorch's polynomial-fit tutorial) -> one graph, no break:
    # only a read of the lost .grad fails, a store to it is traced
    assert codes("""
        @torch.compile
        def sgd(a, b, lr):
            with torch.no_grad():
                a -= lr * a.grad
                b -= lr * b.grad
                a.grad = None
                b.grad = None
    """) == []
    # a new binding of the name forgets the update; returning .grad as it is works
    assert codes("""
        @torch.compile
        def step(p, q):
            with torch.no_grad():
                p -= 0.1
            p = q
            return p.grad * 2
    """) == []
    assert codes("""
        @torch.compile
        def step(p):
            with torch.no_grad():
                p *= 0.5
            return p.grad
    """) == []


# -- CRV004: a row of a tensor whose dimensions the function shows is not an element ------------


def test_indexing_with_a_row_of_a_2d_tensor_is_not_crv004():
    # explain (pytorch-crf's _compute_score): `start[tags[0]]` with `tags` of shape (seq, batch) -> one graph;
    # the BiLSTM-CRF tutorial's 1-D `tags` -> `transitions[tags[i + 1], tags[i]]` reads .item()
    assert codes("""
        class CRF(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.start = nn.Parameter(torch.zeros(n))
                self.transitions = nn.Parameter(torch.zeros(n, n))

            def forward(self, emissions, tags):
                seq_length, batch_size = tags.shape
                score = self.start[tags[0]] + emissions[0, torch.arange(batch_size), tags[0]]
                for i in range(1, seq_length):
                    score = score + self.transitions[tags[i - 1], tags[i]]
                return score

            def score_1d(self, tags: torch.Tensor):
                assert tags.dim() == 1
                score = self.start[tags[0]]
                for i in range(len(tags) - 1):
                    score = score + self.transitions[tags[i + 1], tags[i]]
                return score

        crf = torch.compile(CRF(5))
    """, all_functions=True)[-3:] == [("CRV004", 16), ("CRV006", 17), ("CRV004", 18)]


def test_a_star_import_of_random_resolves_its_names():
    # graykode's BERT data helper: `from random import *`, then shuffle() in a loop -> WON'T CONVERT
    assert codes("""
        from random import *

        @torch.compile
        def make_batch(tokens, n):
            batch = []
            while len(batch) < n:
                shuffle(tokens)
                batch.append(torch.tensor(tokens[:2]))
            return torch.stack(batch)
    """) == [("CRV006", 6), ("CRV013", 7)]


# -- CRV033: an in-place view of an input ----------------------------------------------------------


def test_an_inplace_view_of_an_input_is_crv033_and_of_a_new_tensor_is_not():
    # explain: x.t_(), x.unsqueeze_(0), x.data.transpose_(0, 1), self.w.data.t_() after a graph op ->
    # "Unsupported function call (delayed)": "Getting an inplace view on a graph input is not supported";
    # x.clone().t_() and x.mul_(2) -> traced
    assert codes("""
        @torch.compile
        def step(param_groups):
            for group in param_groups:
                for p in group["params"]:
                    grad = p.grad.data
                    precond = grad @ grad.t()
                    grad = grad.transpose_(0, 1).contiguous()
                    grad = grad.view(-1)
                    grad.unsqueeze_(0)

        @torch.compile
        def f(x):
            y = x * 2
            x.t_()
            z = x.clone()
            z.t_()
            x.mul_(2)
            return y, z

        class Net(nn.Module):
            def forward(self, x):
                y = x * 2
                self.w.data.t_()
                return y

        net = torch.compile(Net())
    """) == [("CRV006", 3), ("CRV006", 4), ("CRV033", 7), ("CRV033", 14), ("CRV033", 23)]


def test_a_function_looping_over_a_data_loader_is_in_the_all_scope():
    assert codes("""
        def evaluate_loss(net, data_iter, loss):
            total = 0.0
            for X, y in data_iter:
                total = total + loss(net(X), y)
            return total
    """, all_functions=True) == [("CRV013", 3)]


# -- CRV005: assert of `not` / `and` of tensors; CRV009: a mask from a reduction's values ---------


def test_an_assert_of_not_a_tensor_is_crv005_and_an_assert_of_a_tensor_is_not():
    # explain: `assert not torch.isnan(y.sum())`, `assert a.all() and b.all()` -> "generic_jump TensorVariable()";
    # `assert (y > -100).all()`, `assert torch.isfinite(y).all(), "bad"` -> traced
    assert codes("""
        @torch.compile
        def f(x):
            y = x * 2
            assert not torch.isnan(y.sum()), "nan"
            assert (y > -100).all() and (y < 100).all()
            assert (y > -100).all()
            assert torch.isfinite(y).all(), "bad"
            assert y.shape[0] == 3
            return y
    """) == [("CRV005", 4), ("CRV005", 5)]


def test_the_values_of_a_reduction_are_a_tensor_and_a_comparison_of_them_a_mask():
    # explain: `probs[probs.max(-1).values > t]` -> "Dynamic shape operator"
    assert codes("""
        @torch.compile
        def select(model, x, threshold):
            probs = model(x).softmax(-1)
            confident = probs.max(-1).values > threshold
            return probs[confident]
    """) == [("CRV009", 5)]


# -- CRV034: a torch.optim optimizer's step ------------------------------------------------------


def test_an_optimizer_step_after_tensor_work_is_crv034():
    # explain: torch.optim.SGD / Adam / AdamW `step()` after a forward -> "Call to torch._dynamo.graph_break()"
    # (torch/optim/optimizer.py breaks around the step), fresh or already stepped
    assert codes("""
        @torch.compile
        def step(model, optimizer, x, y, i):
            loss = F.cross_entropy(model(x), y) / 4
            if (i + 1) % 4 == 0:
                optimizer.step()
                optimizer.zero_grad()
            return loss
    """) == [("CRV034", 5)]
    # first thing, it splits no graph; carve's compiler keeps its own reading (a Python side effect)
    assert codes("""
        @torch.compile
        def step(opt):
            opt.step()
    """, extend_select=["CRV027"]) == [("CRV027", 3)]


# -- what a method inherits, and indexing elements of a parameter ---------------------------------


def test_a_method_inherited_from_a_base_class_of_the_file_is_followed():
    # d2l: SyntheticRegressionData.get_dataloader calls DataModule.get_tensorloader, which builds a DataLoader
    # after indexing the tensors it is given (explain: "Attempted to inline function marked as skipped")
    assert codes("""
        class DataModule:
            def get_tensorloader(self, tensors, train, indices=slice(0, None)):
                tensors = tuple(a[indices] for a in tensors)
                dataset = torch.utils.data.TensorDataset(*tensors)
                return torch.utils.data.DataLoader(dataset, self.batch_size, shuffle=train)

        class Synthetic(DataModule):
            @torch.compile
            def get_dataloader(self, train):
                i = slice(0, self.num_train) if train else slice(self.num_train, None)
                return self.get_tensorloader((self.X, self.y), train, i)
    """) == [("CRV013", 4), ("CRV013", 5), ("CRV016", 11)]
