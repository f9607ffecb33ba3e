"""The progress display: a bar with ETA on a terminal, plain lines otherwise."""
import io

from heaplab.progress import Progress, fmt_duration


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_eta_uses_each_cells_own_duration_once_known():
    p = Progress(4, ["a", "b", "a", "b"], io.StringIO())
    p.step("a", 10.0, 1, "ok")
    # left: b, a, b; b unseen, so the mean so far (10 s) stands in for it
    assert p.eta() == 30.0
    p.step("b", 2.0, 1, "ok")
    # left: a (10 s), b (2 s)
    assert p.eta() == 12.0


def test_plain_lines_when_not_a_terminal():
    out = io.StringIO()
    p = Progress(2, ["a", "a"], out)
    p.step("a", 1.0, 1, "3.4 ns")
    assert out.getvalue() == "[1/2] rep 1 a: 3.4 ns (ETA 1s)\n"


def test_a_bar_redrawn_in_place_on_a_terminal():
    out = Terminal()
    p = Progress(2, ["a", "a"], out)
    p.step("a", 1.0, 1, "ok")
    text = out.getvalue()
    assert text.startswith("\r[") and "1/2 ETA 1s" in text and "\n" not in text


def test_durations_read_naturally():
    assert fmt_duration(5) == "5s"
    assert fmt_duration(125) == "2m05s"
    assert fmt_duration(3725) == "1h02m"
