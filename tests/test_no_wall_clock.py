"""Nothing in kvert reads the wall clock or waits except through a Clock (DESIGN principle 2)."""

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "kvert"
FORBIDDEN = re.compile(r"\b(time\.time|time\.monotonic|time\.sleep|datetime\.now|datetime\.utcnow|"
                       r"asyncio\.sleep|date\.today)\(")
ALLOWED = {SRC / "clock"}


def test_only_the_clock_module_reads_real_time():
    offenders = []
    for path in SRC.rglob("*.py"):
        if any(parent in ALLOWED for parent in path.parents):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if FORBIDDEN.search(code) and "asyncio.sleep(0)" not in code:
                offenders.append(f"{path.relative_to(SRC)}:{number}: {line.strip()}")
    assert offenders == []
