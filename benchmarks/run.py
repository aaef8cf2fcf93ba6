"""Run every benchmark in this folder (``*_bench.py``), each in its own process.

Benchmarks print figures (operations per second, ratios); they assert nothing and are
not part of the test suite.  usage: python benchmarks/run.py [NAME ...]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    wanted = set(argv)
    failed = 0
    for script in sorted(HERE.glob("*_bench.py")):
        name = script.stem.removesuffix("_bench")
        if wanted and name not in wanted:
            continue
        print(f"== {name} ==", flush=True)
        failed += subprocess.call([sys.executable, str(script)]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
