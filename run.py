#!/usr/bin/env python3
"""heaplab's driver. `./run.py` runs the quick benchmark suite; `./run.py test`
runs every test. See `./run.py --help`. Standard library only."""
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "harness" / "py"))

from heaplab.cli import main  # noqa: E402  (needs the path above)

if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        # the reader (`| head`) went away: say nothing more, and keep Python
        # from complaining again while flushing stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
