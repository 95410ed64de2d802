"""`carve.explain`: what carve compiled and where it broke the graph, for one call.

    out = carve.explain(train_step)(model, x, y, 0)
    print(out)              # graphs, breaks (file:line, rule, message, hint, call stack), guards
    out = carve.explain(train_step, calls=10)(model, x, y, 0)   # also where the time went
    out.graph_count, out.graph_break_count, out.break_reasons[0].code
    out.to_html("step.html")  # the source, each line coloured by what ran it (compiler/report.py)

The function (and every function compiled on its own while it runs: callees
that break its graph) is compiled afresh with the given options, run once
(or `calls` times, with the same arguments), and the RegionSets created
meanwhile are read. Each region call is timed: in compiled code, as Python,
or compiling; the rest of the calls' time is Python between regions. Breaks come from the static
analysis (found before anything ran) and from tracing (found while running).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import NamedTuple

from carve import explain_session, report
from carve.api import CompiledFunction, CompiledModule, compile
from carve.rewriters.rules import rule
from carve.runtime.errors import source_line


@dataclass
class BreakReason:
    code: str
    message: str
    filename: str
    line: int
    source_line: str
    hint: str
    title: str
    # (filename, line, function, source line) from the compiled function inward.
    user_stack: list = field(default_factory=list)
    found: str = "statically"  # or "while tracing"

    def __str__(self) -> str:
        text = f"{self.filename}:{self.line}: {self.code} {self.title}: {self.message}"
        if self.source_line.strip():
            text += f"\n        {self.source_line.strip()}"
        for filename, line, function, source in self.user_stack[1:]:
            text += f"\n      via {filename}:{line} in {function}: {source.strip()}"
        return text + f"\n      hint: {self.hint}"


class TimeSplit(NamedTuple):
    """Seconds of an explain run's calls (ExplainOutput.time_split)."""

    running: float      # the calls' time, compiling aside
    compiling: float
    compiled: float     # in compiled regions
    python: float       # in regions run as Python
    between: float      # Python between regions


@dataclass
class ExplainOutput:
    result: object
    graph_count: int
    graph_break_count: int
    break_reasons: list
    graphs: list
    ops_per_graph: list
    guards: list
    compile_times: list
    eager_statements_run: int
    # One line per graph region: where it is, who runs it (Dynamo, or Python) and why.
    regions: list = field(default_factory=list)
    # What carve keeps in Python although torch.compile would trace it (a Python side effect,
    # a handler a graph would raise past: rules that do not break torch.compile), as BreakReasons.
    kept_in_python: list = field(default_factory=list)
    # The RegionSets of the run (and whole-call captures, which read like one): what to_html shows.
    region_sets: list = field(default_factory=list)
    # Where the run's time went: its calls, their wall time (seconds), and per region
    # (`model.py:12-15`, explain_session.RegionTime) in the order regions were made.
    calls: int = 0
    seconds: float = 0.0
    region_times: list = field(default_factory=list)
    # What to compile instead, when the time says so (see `_advice`).
    advice: list = field(default_factory=list)
    # id(region) -> its explain_session.RegionTime (the report's region cards read it).
    time_by_region: dict = field(default_factory=dict)

    def to_html(self, path) -> None:
        """Write one self-contained HTML page to `path`: each compiled function's source, every
        line coloured by what ran it (a graph region, Python because of a rule, because the cost
        check found it faster, or for another reason), each region's graphs, compiles, FX code and
        guards, and the breaks with their hints (compiler/report.py)."""
        names = ", ".join(dict.fromkeys(regions.name for regions in self.region_sets))
        report.write_page(self, path, f"carve report: {names}" if names else "carve report")

    def __str__(self) -> str:
        lines = [
            f"graphs: {self.graph_count}",
            f"graph breaks: {self.graph_break_count}",
            f"ops per graph: {self.ops_per_graph}",
            f"compile time: {sum(self.compile_times):.3f}s",
        ]
        if self.regions:
            lines.append("regions:")
            lines.extend(f"  {region}" for region in self.regions)
        if self.break_reasons:
            lines.append("break reasons:")
            lines.extend(f"  {i}. {reason}" for i, reason in enumerate(self.break_reasons, 1))
        if self.kept_in_python:
            lines.append("kept in Python by carve (not graph breaks under torch.compile):")
            lines.extend(f"  {i}. {reason}" for i, reason in enumerate(self.kept_in_python, 1))
        lines.extend(self._time_lines())
        if self.advice:
            lines.append("advice:")
            lines.extend(f"  {text}" for text in self.advice)
        if self.guards:
            lines.append("guards (first graph):")
            lines.extend(f"  {g}" for g in self.guards[0])
        return "\n".join(lines)


    def time_split(self) -> TimeSplit | None:
        """The calls' time, compiling aside, split between compiled regions, regions run as
        Python and Python between regions; None without timed calls (`calls=n`)."""
        if not self.calls or not self.region_times:
            return None
        compiling = sum(times.compiling for _, times in self.region_times)
        compiled = sum(times.compiled for _, times in self.region_times)
        python_regions = sum(times.python for _, times in self.region_times)
        running = max(self.seconds - compiling, 1e-12)
        return TimeSplit(running, compiling, compiled, python_regions, max(running - compiled - python_regions, 0.0))

    def _time_lines(self) -> list[str]:
        """`time over 10 calls: 41.2 ms (compiling 0.90 s besides)`, the split between compiled
        graphs, regions run as Python and Python between regions, then each region's share."""
        split = self.time_split()
        if split is None:
            return []
        running, compiling, compiled, python_regions, between = split
        lines = [f"time over {self.calls} call{'s' if self.calls != 1 else ''}: {_ms(running)}"
                 + (f" (compiling {compiling:.2f} s besides)" if compiling else "")]
        for label, seconds in (("in compiled regions", compiled), ("in regions run as Python", python_regions),
                               ("Python between regions", between)):
            lines.append(f"  {label}: {_ms(seconds)} ({100 * seconds / running:.0f}%)")
        lines.append("  by region (calls: compiled / as Python / compiling):")
        for where, times in self.region_times:
            lines.append(f"    {where}  {times.calls} calls: {_ms(times.compiled)} / {_ms(times.python)} / "
                         f"{times.compiling:.2f} s")
        return lines


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def explain(fn, *, calls: int = 1, **compile_options):
    """`explain(fn)(*args, **kwargs)` runs `fn` once under carve and reports what happened;
    `calls=n` runs it n times with the same arguments (the time split is then the steady
    state's, once the cost check has decided)."""
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"carve.explain: calls must be a positive int, got {calls!r}")
    target = fn
    if isinstance(fn, CompiledFunction):
        target = fn.fn
    elif isinstance(fn, CompiledModule):
        target = fn._orig_mod
    compile_options.setdefault("backend", "eager")

    def run(*args, **kwargs):
        # Compiled afresh even if the program compiled it before with the same options.
        with explain_session.collecting() as session:
            compiled = compile(target, **compile_options)
            start = time.perf_counter()
            for _ in range(calls):
                result = compiled(*args, **kwargs)
            seconds = time.perf_counter() - start
        return summarize(result, list(session.sets), session.region_times, calls, seconds)

    return run


def summarize(result, sets, region_times: dict | None = None, calls: int = 0, seconds: float = 0.0) -> ExplainOutput:
    """What `sets` (RegionSets, or whole-call captures) ran: the report of an explain run, or of
    one compiled function at the program's exit (CARVE_REPORT). `region_times`: id(region) ->
    explain_session.RegionTime, over `calls` calls that took `seconds`."""
    reasons: dict[tuple, BreakReason] = {}
    kept: dict[tuple, BreakReason] = {}
    graphs, ops, guards, times, region_lines = [], [], [], [], []
    eager_runs = 0
    for regions in sets:
        for finding in regions.findings.values():
            key = (regions.filename, finding.line, finding.code)
            stack = [(regions.filename, finding.line, regions.name, source_line(regions.filename, finding.line))]
            found = reasons if rule(finding.code).lint_default else kept
            found.setdefault(key, _reason(finding.code, finding.message, regions.filename, finding.line, stack, "statically"))
        eager_runs += sum(regions.eager_calls.values())
        for region in regions.regions:
            region_lines.append(_describe_region(region))
            graphs.extend(region.graphs)
            ops.extend(region.ops_per_graph)
            guards.extend(region.guards)
            times.extend(region.compile_times)
            for event in region.break_events:
                key = (event.filename, event.lineno, event.code)
                reasons.setdefault(key, _reason(event.code, event.message, event.filename, event.lineno,
                                                list(event.user_stack), "while tracing"))
    ordered = sorted(reasons.values(), key=lambda r: (r.filename, r.line, r.code))
    kept_ordered = sorted(kept.values(), key=lambda r: (r.filename, r.line, r.code))
    timed = [(f"{region.filename}:{region.first_line}-{region.last_line}", region_times[id(region)])
             for regions in sets for region in getattr(regions, "regions", ())
             if region_times and id(region) in region_times]
    return ExplainOutput(result, len(graphs), len(ordered), ordered, graphs, ops, guards, times, eager_runs,
                         region_lines, kept_ordered, list(sets), calls, seconds, timed, _advice(timed),
                         dict(region_times or {}))


def _advice(timed: list) -> list[str]:
    """When one region holds nearly all the compiled time and every other region runs as Python
    (the cost check found the glue faster uncompiled), the function's compile buys nothing that
    compiling what that region calls would not:

        advice: only model.py:30-31 runs compiled (97% of the compiled time); the rest runs as
        Python. Compiling what it calls (carve.compile(model), say) would do as well, with no
        guards on the rest of the function."""
    compiled = [(where, times) for where, times in timed if times.compiled > 0]
    total = sum(times.compiled for _, times in compiled)
    if len(timed) < 3 or not total:
        return []
    where, busiest = max(compiled, key=lambda item: item[1].compiled)
    others_python = all(times.compiled == 0 or times is busiest or times.compiled < 0.03 * total
                        for _, times in timed)
    if busiest.compiled < 0.9 * total or not others_python:
        return []
    return [f"only {where} runs compiled ({100 * busiest.compiled / total:.0f}% of the compiled time); the rest "
            "runs as Python. Compiling what it calls (carve.compile(model), say) would do as well, with no guards "
            "on the rest of the function."]


def _describe_region(region) -> str:
    """`model.py:12-15 captured by Dynamo (torch._dynamo captures every region)`, or why it runs
    as Python; the layers compiled once each."""
    where = f"{region.filename}:{region.first_line}-{region.last_line}"
    path = region.capture_path
    if path.kind == "dynamo":
        text = f"{where} captured by Dynamo ({path.reason})"
    else:
        text = f"{where} runs eagerly ({path.reason})"
    layers = region.capture.layers_compiled_once
    if layers:
        text += f"; layers compiled once each: {', '.join(layers)} (no_grad, Inductor)"
    return text


def _reason(code, message, filename, line, stack, found) -> BreakReason:
    r = rule(code)
    return BreakReason(code, message, filename, line, source_line(filename, line), r.hint, r.title, stack, found)
