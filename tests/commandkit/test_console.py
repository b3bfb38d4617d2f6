"""commandkit.console: a command stopped under a progress bar (Ctrl-C, an input error met in
its loop) prints its one error line below the bar, and the bar is not drawn again after it."""

import contextlib
import gc
import io
import sys

import pytest

from commandkit.console import INTERRUPTED, PIPE_CLOSED, run_command
from commandkit.errors import InputError


@pytest.mark.parametrize(
    "stop, status, line",
    [
        (KeyboardInterrupt(), INTERRUPTED, "error: interrupted"),
        (InputError("x.txt:3: bad line"), 1, "error: x.txt:3: bad line"),
        (BrokenPipeError(32, "Broken pipe"), 1, f"error: {PIPE_CLOSED}"),  # `| head`: not a traceback
    ],
)
def test_the_error_line_comes_below_an_open_progress_bar(stop, status, line):
    from tqdm import tqdm

    def command(args):
        bar = tqdm(total=10, file=sys.stderr, desc="scoring")  # open when the command stops
        bar.update(3)
        raise stop

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert run_command(command, None) == status
        gc.collect()  # an open bar closes (and redraws itself) when it is collected
    text = err.getvalue()
    assert text.endswith(f"\n{line}\n"), repr(text[-200:])  # on a line of its own, and the last thing written
    assert text.count("scoring") >= 1
