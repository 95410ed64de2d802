"""Random break-heavy PyTorch programs, as source text, for differential tests against eager.

    source = generate_program(seed=3)     # a module defining `program(x, y, log)`

Each program mixes tensor chains with the constructs carve outlines: prints,
`.item()` reads, data-dependent if/while, loops with break/continue, try
blocks that raise, user context managers, list mutation, explicit graph
breaks, early returns, and callees that print. Deterministic per seed.
"""

from __future__ import annotations

import random

HEADER = '''\
import torch


class Ctx:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def __enter__(self):
        self.log.append("enter " + self.name)
        return self

    def __exit__(self, *exc):
        self.log.append("exit " + self.name)
        return False


def loud(t):
    print("loud", round(float(t.sum()), 4))
    return t * 0.5


def quiet(t):
    return torch.tanh(t) + 0.1


'''

UNARY = ["torch.sin({a})", "{a}.relu()", "torch.tanh({a})", "{a} * 0.5", "{a}.abs() + 0.1", "torch.cos({a}) * {a}"]
BINARY = ["{a} + {b}", "{a} * {b}", "{a} - {b} * 0.3", "torch.maximum({a}, {b})"]


class _Writer:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[str] = []
        self.vars = ["x", "y"]
        self.counter = 0

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def fresh(self) -> str:
        self.counter += 1
        return f"v{self.counter}"

    def tensor_expr(self) -> str:
        a = self.rng.choice(self.vars)
        if self.rng.random() < 0.5:
            return self.rng.choice(UNARY).format(a=a)
        return self.rng.choice(BINARY).format(a=a, b=self.rng.choice(self.vars))

    def assign(self, indent: int, reuse: bool = True) -> None:
        # Reassign an existing name (so every path defines it) or make one at the top level.
        if reuse or indent > 1:
            target = self.rng.choice(self.vars)
        else:
            target = self.fresh()
        self.emit(indent, f"{target} = {self.tensor_expr()}")
        if target not in self.vars:
            self.vars.append(target)

    def block(self, indent: int, depth: int, in_loop: bool) -> None:
        for _ in range(self.rng.randint(1, 3)):
            self.statement(indent, depth, in_loop)

    def statement(self, indent: int, depth: int, in_loop: bool) -> None:
        choices = ["assign", "assign", "assign", "print", "item", "append", "count", "graph_break", "callee"]
        if depth < 2:
            choices += ["if_tensor", "if_item", "for", "while", "try", "with"]
        if in_loop:
            choices += ["break", "continue"]
        if depth == 1:
            choices += ["early_return"]
        kind = self.rng.choice(choices)
        a = self.rng.choice(self.vars)
        if kind == "assign":
            self.assign(indent)
        elif kind == "print":
            self.emit(indent, f'print("p{self.counter}", tuple({a}.shape), round({a}.sum().item(), 3))')
        elif kind == "item":
            self.emit(indent, f"n = n + int({a}.max().item() > 0)")
        elif kind == "append":
            self.emit(indent, f"log.append(round(float({a}.mean()), 4))")
        elif kind == "count":
            self.emit(indent, "n += 1")
        elif kind == "graph_break":
            self.emit(indent, "torch._dynamo.graph_break()")
        elif kind == "callee":
            self.emit(indent, f"{a} = {self.rng.choice(['loud', 'quiet'])}({a})")
        elif kind == "if_tensor":
            self.emit(indent, f"if {a}.mean() > 0:")
            self.block(indent + 1, depth + 1, in_loop)
            self.emit(indent, "else:")
            self.block(indent + 1, depth + 1, in_loop)
        elif kind == "if_item":
            self.emit(indent, f"if {a}.sum().item() > {self.rng.choice([-1, 0, 1])}:")
            self.block(indent + 1, depth + 1, in_loop)
        elif kind == "for":
            self.emit(indent, f"for i in range({self.rng.randint(1, 4)}):")
            self.block(indent + 1, depth + 1, True)
        elif kind == "while":
            # Bounded: the body may grow `a` again, and eager must terminate too.
            self.emit(indent, "k = 0")
            self.emit(indent, f"while {a}.abs().max() > 2 and k < 6:")
            self.emit(indent + 1, "k += 1")
            self.emit(indent + 1, f"{a} = {a} * 0.5")
            self.block(indent + 1, depth + 1, False)
        elif kind == "try":
            self.emit(indent, "try:")
            self.block(indent + 1, depth + 1, in_loop)
            self.emit(indent + 1, f"if {a}.sum() > {self.rng.choice([0, 2, 5])}:")
            self.emit(indent + 2, 'raise ValueError("big")')
            self.emit(indent, "except ValueError as error:")
            self.emit(indent + 1, "log.append(str(error))")
            self.emit(indent + 1, f"{a} = {a} * 0.25")
            if self.rng.random() < 0.5:
                self.emit(indent, "finally:")
                self.emit(indent + 1, "n += 10")
        elif kind == "with":
            self.emit(indent, f'with Ctx(log, "c{self.counter}"):')
            self.block(indent + 1, depth + 1, in_loop)
        elif kind == "break":
            self.emit(indent, f"if {a}.max() > 1.5:")
            self.emit(indent + 1, "break")
        elif kind == "continue":
            self.emit(indent, f"if {a}.min() < -1:")
            self.emit(indent + 1, "continue")
        elif kind == "early_return":
            self.emit(indent, f"if {a}.sum() > 4:")
            self.emit(indent + 1, f"return {a} * 2, n")


def generate_program(seed: int) -> str:
    rng = random.Random(seed)
    writer = _Writer(rng)
    writer.emit(0, "def program(x, y, log):")
    writer.emit(1, "n = 0")
    for _ in range(rng.randint(3, 7)):
        if rng.random() < 0.3:
            writer.assign(1, reuse=False)
        else:
            writer.statement(1, 1, False)
    writer.emit(1, f"return {' + '.join(writer.vars[:3])}, n")
    return HEADER + "\n".join(writer.lines) + "\n"
