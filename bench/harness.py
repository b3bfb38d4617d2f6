"""The benchmarks' shared harness: timing, the machine, JSON records, side-by-side tables.

Every benchmark in bench/ goes through it, so that all of them report alike::

    from bench import harness

    def main(argv=None):
        parser = argparse.ArgumentParser(description=__doc__)
        harness.add_arguments(parser, repeats=3)          # --repeats, --warmup, --json PATH
        args = harness.parse(parser, argv)                # also: --json checked writable now
        t = harness.time_it(lambda: work(), repeats=args.repeats, warmup=args.warmup)
        print(harness.describe(t, items=n, unit="sentences"))
        rows = [harness.Row("P-CXMI", "sentences/s", baseline=..., ours=...)]
        print(harness.table(rows))
        harness.finish(args, "cxmi_speed", {"ours": t.to_dict(), "rows": harness.compare(rows)})

The API:

``time_it(fn, repeats, warmup, sync)``
    Call ``fn`` ``warmup`` times untimed, then ``repeats`` times timed (``time.perf_counter``;
    ``sync`` is called before each clock reading, e.g. ``torch.cuda.synchronize``). Returns a
    ``Timing``: every time, the median, min, max; ``fn``'s results are ``Timing.results``
    (the last one ``Timing.result``).
    A ``fn`` that times itself returns ``Elapsed(seconds, result)``: its seconds are recorded.
``time_interleaved(fns, repeats, warmup, sync)``
    The same for several variants, run in turn within each repeat (the order rotating from repeat
    to repeat) so that a busy machine slows all alike: ``{name: Timing}``.
``clock()``
    A reading of the same clock, for moments within a run (when a subprocess's last line came).
``summarize(times)``, ``spread(values)``
    A ``Timing`` of times measured elsewhere (a subprocess's own report); the median, min and
    max of other figures a tool reports (fairseq's words/s).
``machine_info(device)``
    The machine: CPU model, cores, the cores this process may use, torch's threads, Python,
    torch, CUDA's device name when there is one, the git commit.
``Row``, ``compare(rows)``, ``table(rows)``
    Baseline against ours: each row's ratio (``ours / baseline``, or ``baseline / ours`` when
    lower is better, such as seconds: above 1 means ours is better either way).
``record(name, results, args)``, ``write_json(path, record)``, ``finish(args, name, results)``
    One JSON record per run (benchmark, command line, time, machine, arguments, results),
    written atomically (a temporary beside it, renamed): a failed run leaves no file.
``add_arguments(parser, repeats, warmup)``, ``parse(parser, argv)``
    The options every benchmark shares; ``parse`` checks ``--json`` can be written before any
    work, so a bad path costs one line and no hour of measuring.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

REPO = Path(__file__).resolve().parent.parent


# --- timing -------------------------------------------------------------------------------------


@dataclass
class Timing:
    """Seconds of each timed repeat, and their summary."""

    times: List[float]
    warmup: int = 0
    results: List[Any] = field(default_factory=list, repr=False, compare=False)  # fn's, one per repeat

    def __post_init__(self) -> None:
        if not self.times:
            raise ValueError("a Timing needs at least one time")

    @property
    def result(self) -> Any:
        """The last repeat's result."""
        return self.results[-1] if self.results else None

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def max(self) -> float:
        return max(self.times)

    @property
    def repeats(self) -> int:
        return len(self.times)

    def rate(self, items: float) -> float:
        """``items`` per second at the median time."""
        return items / self.median if self.median > 0 else math.inf

    def to_dict(self, items: Optional[float] = None) -> Dict[str, Any]:
        d: Dict[str, Any] = {
            "median_s": self.median,
            "min_s": self.min,
            "max_s": self.max,
            "repeats": self.repeats,
            "warmup": self.warmup,
            "times_s": list(self.times),
        }
        if items is not None:
            d["items"] = items
            d["per_s"] = self.rate(items)
        return d


@dataclass
class Elapsed:
    """What a timed function returns when it measures its own time (a subprocess's own figure,
    or one section of its work such as decoding without model loading): ``seconds`` is then the
    time recorded instead of the wall time of the call, ``result`` the call's result."""

    seconds: float
    result: Any = None


def summarize(times: Sequence[float], warmup: int = 0) -> Timing:
    """A ``Timing`` of times measured elsewhere."""
    return Timing([float(t) for t in times], warmup)


def spread(values: Sequence[float]) -> Dict[str, Any]:
    """Median, min and max of figures a tool reports itself (fairseq's words/s, say)."""
    if not values:
        raise ValueError("no values to summarize")
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "values": list(values)}


def _check_counts(repeats: int, warmup: int) -> None:
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, not {repeats}")
    if warmup < 0:
        raise ValueError(f"warmup must be 0 or more, not {warmup}")


def time_it(
    fn: Callable[[], Any], repeats: int = 3, warmup: int = 0, sync: Optional[Callable[[], Any]] = None
) -> Timing:
    """``fn()`` ``warmup`` times untimed, then ``repeats`` times timed."""
    _check_counts(repeats, warmup)
    for _ in range(warmup):
        fn()
    times, results = [], []
    for _ in range(repeats):
        if sync:
            sync()
        t0 = time.perf_counter()
        result = fn()
        if sync:
            sync()
        seconds = time.perf_counter() - t0
        if isinstance(result, Elapsed):
            seconds, result = result.seconds, result.result
        times.append(seconds)
        results.append(result)
    return Timing(times, warmup, results)


def time_interleaved(
    fns: Mapping[str, Callable[[], Any]],
    repeats: int = 3,
    warmup: int = 0,
    sync: Optional[Callable[[], Any]] = None,
    rotate: bool = True,
) -> Dict[str, Timing]:
    """Each of ``fns`` timed ``repeats`` times, all of them in turn within each repeat; with
    ``rotate`` the order shifts by one every repeat, so that none always runs first."""
    _check_counts(repeats, warmup)
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    times: Dict[str, List[float]] = {name: [] for name in names}
    results: Dict[str, List[Any]] = {name: [] for name in names}
    for r in range(repeats):
        shift = r % len(names) if rotate and names else 0
        for name in names[shift:] + names[:shift]:
            one = time_it(fns[name], repeats=1, sync=sync)
            times[name].append(one.times[0])
            results[name].append(one.result)
    return {name: Timing(times[name], warmup, results[name]) for name in names}


def clock() -> float:
    """A reading of the benchmarks' clock (``time.perf_counter``, seconds): for a benchmark that
    marks moments (when a subprocess wrote its last line) rather than timing a call."""
    return time.perf_counter()


def describe(t: Timing, items: Optional[float] = None, unit: str = "items") -> str:
    """One line: median (min-max) over the repeats, and the rate when ``items`` is given."""
    line = f"{t.median:.3f} s median ({t.min:.3f}-{t.max:.3f}, {t.repeats} repeats)"
    if items is not None:
        line += f", {t.rate(items):,.1f} {unit}/s"
    return line


# --- the machine --------------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit() -> Optional[str]:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None


def machine_info(device: Optional[str] = None) -> Dict[str, Any]:
    """What ran the benchmark. torch is described only when it is installed; CUDA only when
    present (``device`` names the one used, e.g. ``cuda:0``; by default the first)."""
    info: Dict[str, Any] = {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "commit": _git_commit(),
    }
    try:
        import torch
    except ImportError:
        return info
    info["torch"] = torch.__version__
    info["torch_threads"] = torch.get_num_threads()
    info["cuda"] = None
    if torch.cuda.is_available():
        dev = torch.device(device if device and device.startswith("cuda") else "cuda")
        info["cuda"] = torch.cuda.get_device_name(dev)
        info["cuda_version"] = torch.version.cuda
    return info


def machine_line(info: Mapping[str, Any]) -> str:
    """The machine in one line, for the head of a benchmark's output."""
    parts = [f"{info['cpu']}, {info['usable_cores']}/{info['cores']} cores"]
    if "torch" in info:
        parts.append(f"torch {info['torch']} ({info['torch_threads']} threads)")
    parts.append(f"Python {info['python']}")
    if info.get("cuda"):
        parts.append(f"CUDA {info['cuda']}")
    return "; ".join(parts)


# --- baseline against ours ----------------------------------------------------------------------


@dataclass
class Row:
    """One measure, baseline against ours. ``higher_is_better``: a rate (True), a time (False)."""

    label: str
    unit: str
    baseline: float
    ours: float
    higher_is_better: bool = True

    @property
    def ratio(self) -> float:
        """Above 1: ours is better (faster, or more per second)."""
        num, den = (self.ours, self.baseline) if self.higher_is_better else (self.baseline, self.ours)
        if den == 0:
            return math.inf if num > 0 else math.nan
        return num / den


def compare(rows: Sequence[Row]) -> List[Dict[str, Any]]:
    """The rows as records with their ratios (for the JSON)."""
    return [dict(asdict(r), ratio=r.ratio) for r in rows]


def _number(x: float) -> str:
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return f"{x:,.3f}" if abs(x) < 100 else f"{x:,.1f}"


def table(rows: Sequence[Row], baseline: str = "baseline", ours: str = "ours") -> str:
    """A markdown table of the rows side by side with the ratio (``x`` times better)."""
    head = ["", "unit", baseline, ours, f"{ours} vs {baseline}"]
    body = [[r.label, r.unit, _number(r.baseline), _number(r.ours), f"{r.ratio:.2f}x"] for r in rows]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]

    def fmt(cells: Sequence[str]) -> str:
        return (
            "| "
            + " | ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
            + " |"
        )

    rule = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return "\n".join([fmt(head), rule, *(fmt(line) for line in body)])


# --- records ------------------------------------------------------------------------------------


def _plain(x: Any) -> Any:
    """JSON cannot hold Paths, Timings, NumPy numbers and arrays, or inf; make them plain."""
    if hasattr(x, "tolist") and not isinstance(x, (str, bytes)):  # NumPy scalars and arrays
        x = x.tolist()
    if isinstance(x, Timing):
        return x.to_dict()
    if isinstance(x, Row):
        return compare([x])[0]
    if isinstance(x, Path):
        return str(x)
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set)):
        return [_plain(v) for v in x]
    return x


def record(
    name: str, results: Any, args: Optional[argparse.Namespace] = None, device: Optional[str] = None
) -> Dict[str, Any]:
    """One run's record: what ran, when, where, with which arguments, and what it measured."""
    arguments = {k: v for k, v in vars(args).items() if k != "json"} if args is not None else {}
    return {
        "benchmark": name,
        "command": " ".join([Path(sys.executable).name, "-m", f"bench.{name}", *sys.argv[1:]]),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine_info(device),
        "arguments": _plain(arguments),
        "results": _plain(results),
    }


def write_json(path: str, rec: Mapping[str, Any]) -> None:
    """``rec`` to ``path`` as indented JSON, atomically (never a partial file)."""
    from commandkit.outputs import atomic_write_text

    atomic_write_text(path, json.dumps(_plain(rec), indent=2, ensure_ascii=False) + "\n", transactional=False)


def finish(args: argparse.Namespace, name: str, results: Any, device: Optional[str] = None) -> Dict[str, Any]:
    """The end of a benchmark: its record, written to ``--json`` when given; returned."""
    rec = record(name, results, args, device)
    if getattr(args, "json", None):
        write_json(args.json, rec)
        print(f"wrote {args.json}")
    return rec


# --- options ------------------------------------------------------------------------------------


def add_arguments(
    parser: argparse.ArgumentParser, repeats: Optional[int] = 3, warmup: Optional[int] = None, json_alias: bool = True
) -> argparse.ArgumentParser:
    """``--repeats N`` (when ``repeats`` is not None: its default), ``--warmup N`` (when
    ``warmup`` is not None) and ``--json PATH`` (also spelt ``--out``, its older name)."""
    if repeats is not None:
        parser.add_argument(
            "--repeats", type=int, default=repeats, help=f"timed runs, median reported (default {repeats})"
        )
    if warmup is not None:
        parser.add_argument("--warmup", type=int, default=warmup, help=f"untimed runs first (default {warmup})")
    names = ["--json", "--out"] if json_alias else ["--json"]
    parser.add_argument(*names, dest="json", metavar="PATH", help="write the run's record here as JSON (atomically)")
    return parser


def check_writable(path: str) -> None:
    """Exit with one line now if ``path`` cannot be written (before hours of measuring)."""
    target = Path(path)
    if target.is_dir():
        sys.exit(f"{path}: is a directory; give a file path for --json")
    parent = target.resolve().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        sys.exit(f"{path}: cannot write here ({parent} is not a writable directory)")
    if target.exists() and not os.access(target, os.W_OK):
        sys.exit(f"{path}: cannot write (permission denied)")


def parse(parser: argparse.ArgumentParser, argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """``parser.parse_args(argv)``, then the shared options checked (repeats >= 1, --json writable)."""
    args = parser.parse_args(argv)
    if getattr(args, "repeats", 1) < 1:
        parser.error(f"--repeats must be at least 1, not {args.repeats}")
    if getattr(args, "warmup", 0) < 0:
        parser.error(f"--warmup must be 0 or more, not {args.warmup}")
    if getattr(args, "json", None):
        check_writable(args.json)
    return args
