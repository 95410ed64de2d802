"""The checks the real-code corpus (tests/lint_corpus_real) led to, each on a small example:
recurrent modules (CRV024), layers and parameters built in compiled code (CRV025), sparse tensors
(CRV026), tensor elements used as Python ints and transformers reading their masks (CRV004),
Dynamo's skipped functions (CRV013), submodules followed from what `__init__` assigns, and breaks
before the first tensor operation (CRV027)."""

import textwrap

import pytest

from carve.rewriters.lint import LintConfig, lint_source

HEADER = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"


def codes(text, **config):
    source = HEADER + textwrap.dedent(text).lstrip("\n")
    result = lint_source(source, "m.py", LintConfig(**config))
    assert result.error is None, result.error
    return [(f.code, f.line - HEADER.count("\n")) for f in result.findings]


def messages(text, **config):
    result = lint_source(HEADER + textwrap.dedent(text).lstrip("\n"), "m.py", LintConfig(**config))
    return [f.message for f in result.findings]


# -- CRV024: RNN modules -----------------------------------------------------------------------

RNN_NET = """
class Net(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.cell = nn.LSTMCell(4, 4)
        if kind in ("LSTM", "GRU"):
            self.rnn = getattr(nn, kind)(4, 4)
        else:
            self.rnn = nn.RNN(4, 4)

    def forward(self, x):
        y = self.proj(x)
        h, c = self.cell(y[0])
        out, _ = self.rnn(y)
        return out + h
model = torch.compile(Net("LSTM"))
"""


def test_a_call_of_an_rnn_module_held_in_an_attribute_is_crv024_and_a_cell_is_not():
    assert codes(RNN_NET) == [("CRV024", 14)]
    assert "self.rnn is an nn.RNN" in messages(RNN_NET)[0]


def test_an_rnn_module_reached_through_a_submodule_breaks_the_callers_graph_there():
    found = codes("""
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(8, 8, batch_first=True)

            def forward(self, x):
                out, (h, c) = self.lstm(x)
                return h[-1]

        class Classifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10, 8)
                self.encoder = Encoder()
                self.out = nn.Linear(8, 2)

            def forward(self, tokens):
                return self.out(self.encoder(self.embed(tokens)))
        model = torch.compile(Classifier())
    """)
    assert found == [("CRV024", 7), ("CRV016", 18)]


def test_a_module_level_rnn_called_from_a_compiled_function():
    assert codes("""
        lstm = nn.LSTM(3, 3)

        @torch.compile
        def step(x):
            return lstm(x * 2)[0]
    """) == [("CRV024", 5)]


def test_blocks_of_a_module_list_are_followed_in_a_loop():
    assert codes("""
        class Noisy(nn.Module):
            def forward(self, x):
                y = x * 2
                print(y.sum())
                return y

        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Noisy() for _ in range(2)])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x
        model = torch.compile(Stack())
    """) == [("CRV003", 4), ("CRV006", 13), ("CRV016", 14)]


# -- CRV025: parameters and layers built in compiled code ----------------------------------------

def test_a_layer_or_parameter_built_in_forward_is_crv025_and_a_layer_without_weights_is_not():
    assert codes("""
        class Attention(nn.Module):
            def forward(self, q, k):
                scores = q @ k.transpose(-1, -2)
                attn = nn.Softmax(dim=-1)(scores)
                out = nn.Linear(4, 4)(attn)
                scale = nn.Parameter(torch.ones(4))
                return out * scale
        model = torch.compile(Attention())
    """) == [("CRV025", 5), ("CRV025", 6)]


def test_a_module_class_of_the_file_that_builds_layers_is_crv025_when_built_in_compiled_code():
    assert codes("""
        class Block(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.conv = nn.Conv2d(c, c, 3)

        class Plain(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU()

        @torch.compile
        def make(x, c):
            y = x * 2
            blocks = [Block(c), Plain()]
            return nn.Sequential(*blocks)(y)
    """) == [("CRV025", 14)]


# -- CRV026: sparse tensors ----------------------------------------------------------------------

def test_sparse_matrix_products_and_conversions_are_crv026():
    assert codes("""
        @torch.compile
        def propagate(x, adj, w):
            support = torch.mm(x, w)
            out = torch.spmm(adj, support)
            return out + x.to_sparse().to_dense()
    """) == [("CRV026", 4), ("CRV026", 5)]


# -- CRV004: tensor elements used as Python ints, transformers reading their masks ---------------

def test_slicing_with_elements_of_a_tensor_is_crv004():
    assert codes("""
        @torch.compile
        def get_batch(data, n):
            ix = torch.randint(len(data) - n, (4,))
            x = torch.stack([data[i:i + n] for i in ix])
            y = torch.stack([data[i + 1:i + 1 + n] for i in ix])
            return x[:, 1:3], y
    """) == [("CRV004", 4), ("CRV004", 5)]


def test_str_of_a_tensor_is_crv004_and_formatting_one_is_not():
    assert codes("""
        @torch.compile
        def describe(x):
            y = x.sum()
            label = f"{y:.3f}" + "{:.2f}".format(y)
            return label, str(y)
    """) == [("CRV004", 5)]


def test_a_transformer_given_a_mask_reads_it_and_is_crv004_unless_told_it_is_causal():
    assert codes("""
        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2), 1)
                self.transformer = nn.Transformer(8, 2, 1, 1)

            def forward(self, x, mask):
                y = x * 2
                a = self.encoder(y)
                b = self.encoder(y, mask)
                c = self.encoder(y, mask, is_causal=True)
                d = self.transformer.encoder(y, mask)
                return a + b + c + d
        model = torch.compile(LM())
    """) == [("CRV004", 10), ("CRV004", 12)]


# -- CRV013: functions Dynamo skips --------------------------------------------------------------

def test_rng_state_functions_random_and_packing_are_skipped_and_randint_is_traced():
    text = """
        import random
        from torch.nn.utils.rnn import pack_padded_sequence

        @torch.compile
        def step(x, order, lengths):
            y = x * 2
            torch.manual_seed(0)
            random.shuffle(order)
            k = random.randint(0, 3)
            packed = pack_padded_sequence(y, lengths)
            return packed, k
    """
    assert codes(text) == [("CRV013", 7), ("CRV013", 8), ("CRV013", 10)]


# -- CRV027: breaks before the first tensor operation ----------------------------------------------

LEADING = """
import logging
import time
log = logging.getLogger(__name__)

@torch.compile
def step(model, x):
    t0 = time.time()
    log.warning("step")
    ids = x.tolist()
    y = model(torch.tensor(ids))
    print("loss", y.sum().item())
    return y
"""


def test_breaks_before_any_tensor_operation_split_no_graph_and_are_crv027_off_by_default():
    assert codes(LEADING) == [("CRV003", 11), ("CRV004", 11)]
    everything = codes(LEADING, extend_select=["CRV027"])
    assert everything == [("CRV027", 7), ("CRV027", 8), ("CRV027", 9), ("CRV003", 11), ("CRV004", 11)]
    assert any("(CRV013, before any tensor operation" in m for m in messages(LEADING, extend_select=["CRV027"]))


def test_the_same_statements_after_tensor_work_are_breaks():
    assert [code for code, _ in codes("""
        import logging
        import time
        log = logging.getLogger(__name__)

        @torch.compile
        def step(model, x):
            y = model(x)
            t0 = time.time()
            log.warning("step")
            ids = y.tolist()
            return torch.tensor(ids)
    """)] == ["CRV013", "CRV003", "CRV004"]


def test_under_fullgraph_every_break_is_reported_as_its_own_rule():
    assert [code for code, _ in codes(LEADING.replace("@torch.compile", "@torch.compile(fullgraph=True)"))] == [
        "CRV013", "CRV003", "CRV004", "CRV003", "CRV004"]


def test_a_break_inside_a_loop_is_reported_even_first_thing():
    assert [code for code, _ in codes("""
        @torch.compile
        def f(x):
            for i in range(2):
                print(i)
                x = x + 1
            return x
    """)] == ["CRV006", "CRV003"]


def test_a_call_of_a_helper_that_breaks_first_and_computes_after_is_a_break_when_the_caller_goes_on():
    helper = """
        def noisy(x):
            print("noisy", x.shape)
            return x * 2

        @torch.compile
        def f(x):
            y = noisy(x)
            {rest}
    """
    assert ("CRV016", 7) in codes(helper.format(rest="return y + 1"))
    assert ("CRV016", 7) not in codes(helper.format(rest="return y"))


@pytest.mark.parametrize("statement", ["print(x)", "x_max = x.item()", "t = torch.bincount(x).float()"])
def test_a_first_statement_whose_break_comes_before_its_own_tensor_work_is_leading(statement):
    assert codes(f"""
        @torch.compile
        def f(x):
            {statement}
            return x + 1
    """) == []


# -- What the held-out corpora's misses led to (tests/lint_corpus_real_holdout, ..._holdout2) -------


def test_indexing_with_an_element_of_a_tensor_taken_by_position_is_crv004():
    """BiLSTM-CRF's `self.transitions[tags[i + 1], tags[i]]`: each `tags[i]` is a 0-dim tensor, which
    indexing reads with .item() (Dynamo: "Data dependent operator"). A slice, a tensor index or a
    tensor's row indexed by a number stay traced."""
    assert codes("""
        @torch.compile
        def score(transitions, feats):
            tags = torch.cat([torch.tensor([3]), feats.argmax(1)])
            s = transitions[tags[1], tags[0]]
            return s + feats[0][tags[-1]]

        @torch.compile
        def traced(x, idx, n: int):
            rows = x[idx[:, 0]]
            return rows[0] + x[1][2] + x[idx] + x[n - 1]
    """) == [("CRV004", 4), ("CRV004", 5)]


def test_next_and_iter_of_a_data_loader_are_crv013():
    """makemore's InfiniteDataLoader: `next(self.data_iter)` runs `_BaseDataLoaderIter.__next__`, in
    torch/utils, which Dynamo skips ("Attempted to inline function marked as skipped")."""
    assert codes("""
        @torch.compile
        def step(model, train_loader, items):
            x = model(torch.ones(2))
            batch = next(iter(train_loader))
            first = next(iter(items))
            return x, batch, first
    """) == [("CRV013", 4)]


def test_the_deprecated_init_spellings_are_crv013_and_the_underscored_ones_are_not():
    """pytorch-cifar's `init.kaiming_normal(m.weight, mode='fan_out')`: the deprecated spelling warns from
    torch's own code (`_warnings.warn`, skipped); `init.kaiming_normal_` is traced."""
    assert codes("""
        from torch.nn import init

        @torch.compile
        def init_params(net):
            for m in net.modules():
                if isinstance(m, nn.Conv2d):
                    init.kaiming_normal(m.weight, mode='fan_out')
                    init.kaiming_normal_(m.weight, mode='fan_out')
                    nn.init.xavier_uniform(m.weight)
    """) == [("CRV006", 5), ("CRV013", 7), ("CRV013", 9)]


def test_an_assignment_to_data_that_changes_the_dtype_is_crv029_and_one_that_keeps_it_is_not():
    """CLIP's convert_weights: `l.weight.data = l.weight.data.half()` (Dynamo: "Failed to mutate tensor
    data attribute to different dtype"); the same assignment keeping float32 is traced."""
    assert codes("""
        @torch.compile
        def convert(layer, x):
            y = x * 2
            layer.weight.data = layer.weight.data.half()
            layer.bias.data = layer.bias.data.to(dtype=torch.bfloat16)
            layer.weight.data = layer.weight.data * 2
            layer.weight.data = layer.weight.data.float()
            layer.weight.data = layer.weight.data.to(torch.float32)
            half = layer.weight.data.half()
            return y + half.sum()
    """, select=["CRV029"]) == [("CRV029", 4), ("CRV029", 5)]


def test_a_function_passed_to_module_apply_is_followed_as_a_call():
    """nn.Module.apply calls its argument on each submodule: CLIP's `model.apply(_convert_weights_to_fp16)`,
    a function defined inside the compiled one, and a module-level function or a method likewise; a
    caller of the function that applies it has the break inside (CRV016). `Fn.apply(x)` of an autograd
    Function is not a call of x."""
    assert codes("""
        def to_double(m):
            if isinstance(m, nn.Linear):
                m.weight.data = m.weight.data.double()

        def convert(model: nn.Module):
            def to_fp16(l):
                if isinstance(l, nn.Linear):
                    l.weight.data = l.weight.data.half()
            model.apply(to_fp16)

        @torch.compile
        def build(model, x):
            y = model(x)
            convert(model)
            model.apply(to_double)
            return Scale.apply(y)

        class Net(nn.Module):
            def forward(self, x):
                y = x + 1
                self.apply(self._cast)
                return y

            def _cast(self, m):
                m.weight.data = m.weight.data.half()

        net = torch.compile(Net())
    """, select=["CRV016", "CRV029"]) == [
        ("CRV029", 3), ("CRV029", 8), ("CRV016", 9), ("CRV016", 14), ("CRV016", 15), ("CRV016", 21), ("CRV029", 25)]


def test_removing_a_hook_through_a_kept_handle_is_crv030_and_list_remove_is_not():
    """whisper's `for hook in self.hooks: hook.remove()` (Dynamo: "Attempted to represent unregistered
    RemovableHandle", the frame skipped inside the loop); `list.remove(x)` takes the element."""
    assert codes("""
        class Inference:
            @torch.compile
            def cleanup(self, x, names):
                y = x * 2
                for hook in self.hooks:
                    hook.remove()
                names.remove("y")
                return y
    """) == [("CRV006", 5), ("CRV030", 6)]


def test_a_method_fetching_a_batch_from_a_data_loader_is_in_the_all_scope():
    """makemore's InfiniteDataLoader.next does no tensor arithmetic, but a DataLoader's batches are tensors
    and its iterators are skipped by torch.compile: `--all` lints it; a plain `next()` of a list's iterator
    is not."""
    assert codes("""
        class InfiniteDataLoader:
            def next(self):
                try:
                    batch = next(self.data_iter)
                except StopIteration:
                    self.data_iter = iter(self.train_loader)
                    batch = next(self.data_iter)
                return batch

        def first(items):
            return next(iter(items))
    """, all_functions=True) == [("CRV007", 3), ("CRV013", 4), ("CRV013", 6), ("CRV013", 7)]
