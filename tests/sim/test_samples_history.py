"""A recorded history from a samples CSV file (``kvert.sim.samples_history.read_samples_file``):
resampling onto the grid (mean CPU, max memory per step), namespaces, OOM rows, holding the
last value inside an instance's life, errors naming the file and line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvert.sim.recorded import HistoryImportError
from kvert.sim.samples_history import read_samples_file

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_714_953_600          # 2024-05-06T00:00:00Z
MI = 2**20


def write(tmp_path: Path, text: str, name: str = "samples.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def by_key(history):
    return {c.key: c for c in history.containers}


def test_resampling_namespaces_and_oom_rows(tmp_path):
    path = write(tmp_path, f"""\
timestamp,pod,container,cpu,memory,event,namespace
{T0},web-1,app,0.5,100,,prod
{T0 + 20},web-1,app,0.7,300,,prod
{T0 + 40},web-1,app,,200,,prod
{T0 + 60},web-1,app,0.1,50,,prod
{T0 + 70},web-1,app,,{300 * MI},oom,prod
{T0 + 130},web-1,app,0.3,60,,prod
{T0 + 10},web-1,app,2.0,999,,
{T0 + 200},other,side,0.25,7,,staging
""")
    h = read_samples_file(path, step=60)
    # start: the first timestamp; the last sample's step is the last step
    assert h.start == T0 and h.step == 60 and h.steps == 4 and h.source == str(path)
    c = by_key(h)
    assert sorted(c) == [("default", "web-1", "app"), ("prod", "web-1", "app"), ("staging", "other", "side")]
    app = c[("prod", "web-1", "app")]
    # step 0: mean CPU of 0.5 and 0.7; max memory of 100, 300, 200
    assert app.cpu[0] == pytest.approx(0.6) and app.memory[0] == 300
    # step 1: the OOM row's memory (the request) is not usage
    assert app.cpu[1] == pytest.approx(0.1) and app.memory[1] == 50
    assert app.cpu[2] == pytest.approx(0.3) and app.memory[2] == 60
    assert np.isnan(app.cpu[3]) and np.isnan(app.memory[3])          # after its life
    assert app.ooms.tolist() == [1] and app.restarts.tolist() == [1]
    assert app.requests == {"memory": 300 * MI}
    # an empty namespace cell is the default namespace
    default = c[("default", "web-1", "app")]
    assert default.cpu[0] == 2.0 and np.isnan(default.cpu[1:]).all()
    side = c[("staging", "other", "side")]
    assert side.cpu[3] == 0.25 and np.isnan(side.cpu[:3]).all() and side.ooms.size == 0
    assert set(h.pods) == {("prod", "web-1"), ("default", "web-1"), ("staging", "other")}
    assert all(p.owner_kind is None for p in h.pods.values())
    assert h.warnings == []


def test_window_and_holding_inside_a_life(tmp_path):
    path = write(tmp_path, f"""\
timestamp,pod,container,cpu,memory,event
{T0 - 60},p,c,9,9,
{T0},p,c,0.5,100,
{T0 + 60},p,c,0.6,110,
{T0 + 360},p,c,0.8,120,
{T0 + 420},p,c,0.9,130,
{T0 + 480},p,c,0.7,125,
{T0 + 540},p,c,0.4,115,
{T0 + 600},p,c,1,1,
""")
    h = read_samples_file(path, start=T0, end=T0 + 600, step=60)
    assert h.steps == 10 and h.start == T0
    [c] = h.containers
    # outside [start, end): left out; steps 2..5 hold step 1's values
    assert c.cpu.tolist() == [0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.7, 0.4]
    assert c.memory.tolist() == [100, 110, 110, 110, 110, 110, 120, 130, 125, 115]
    [warning] = h.warnings
    assert warning.startswith("cpu samples (4 steps from step 2), memory samples (4 steps from step 2) of default/p/c")
    assert "no value for 4 steps (4m) from 2024-05-06T00:02:00Z (step 2); the last value is held" in warning
    # end is exclusive, rounded up to whole steps (the sample at T0 + 600 is now in); after the life: NaN
    h = read_samples_file(path, start=T0, end=T0 + 661, step=60)
    assert h.steps == 12 and h.containers[0].cpu[10] == 1 and np.isnan(h.containers[0].cpu[11])


def test_a_step_finer_than_the_samples_gives_one_warning(tmp_path):
    rows = "".join(f"{T0 + 300 * i},p,c,0.5,100,\n{T0 + 300 * i},q,c,0.5,100,\n" for i in range(20))
    h = read_samples_file(write(tmp_path, "timestamp,pod,container,cpu,memory,event\n" + rows), step=60)
    assert h.steps == 96 and all(np.isfinite(c.cpu).all() for c in h.containers)   # held in between
    [warning] = h.warnings
    assert warning.startswith("79% of the steps in the containers' lives have no sample: the step (1m) is likely "
                              "shorter than the samples' interval; the last value is held")


def test_the_example_file_reads(tmp_path):
    h = read_samples_file(ROOT / "examples" / "hamster-samples.csv", step=600)
    c = by_key(h)
    assert {k[1] for k in c} == {"hamster-1", "hamster-2"} and {k[0] for k in c} == {"default"}
    assert sum(s.ooms.size for s in h.containers) >= 1
    assert all(np.isfinite(s.cpu[s.seen()]).any() for s in h.containers)


@pytest.mark.parametrize("text,message", [
    ("timestamp,pod,container,cpu,memory,event\n1000,p,c,lots,1,\n", r"bad\.csv:2: column 'cpu': 'lots' is not"),
    ("timestamp,pod,container,cpu,memory\n", r"bad\.csv:1: column 'event': missing from the header"),
    ("timestamp,pod,container,cpu,memory,event\n", r"bad\.csv: no samples"),
    ("", r"bad\.csv:1: no header"),
])
def test_bad_files_name_the_file_and_line(tmp_path, text, message):
    with pytest.raises(HistoryImportError, match=message):
        read_samples_file(write(tmp_path, text, "bad.csv"), step=60)


def test_unreadable_files_and_bad_arguments(tmp_path):
    with pytest.raises(HistoryImportError, match=r"missing\.csv: cannot read"):
        read_samples_file(tmp_path / "missing.csv", step=60)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(HistoryImportError, match="not a UTF-8 text file"):
        read_samples_file(binary, step=60)
    ok = write(tmp_path, f"timestamp,pod,container,cpu,memory,event\n{T0},p,c,1,1,\n")
    with pytest.raises(ValueError, match="step"):
        read_samples_file(ok, step=0)
    with pytest.raises(ValueError, match="before it starts"):
        read_samples_file(ok, start=T0, end=T0 - 60, step=60)


# -- the resampling, against a direct computation ------------------------------------------------------

def direct(rows, start: float, step: float, steps: int):
    """Per step mean CPU and max memory, then the last value held inside the life."""
    cpu = [[r[1] for r in rows if not math.isnan(r[1]) and start + k * step <= r[0] < start + (k + 1) * step]
           for k in range(steps)]
    mem = [[r[2] for r in rows if not math.isnan(r[2]) and start + k * step <= r[0] < start + (k + 1) * step]
           for k in range(steps)]
    c = [sum(v) / len(v) if v else math.nan for v in cpu]
    m = [max(v) if v else math.nan for v in mem]
    seen = [k for k in range(steps) if not (math.isnan(c[k]) and math.isnan(m[k]))]
    if seen:
        for values in (c, m):
            for k in range(seen[0] + 1, seen[-1] + 1):
                if math.isnan(values[k]) and not math.isnan(values[k - 1]):
                    values[k] = values[k - 1]
    return c, m


sample = st.tuples(st.integers(0, 1199),
                   st.one_of(st.just(math.nan), st.floats(0, 8, allow_nan=False).map(lambda x: round(x, 4))),
                   st.one_of(st.just(math.nan), st.integers(0, 2**34).map(float)))


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(sample.filter(lambda r: not (math.isnan(r[1]) and math.isnan(r[2]))), min_size=1, max_size=40),
       step=st.sampled_from([30, 60, 90, 300]))
def test_resampling_is_mean_cpu_and_max_memory_per_step(tmp_path_factory, rows, step):
    lines = ["timestamp,pod,container,cpu,memory,event"]
    for t, c, m in rows:
        lines.append(f"{T0 + t},p,c,{'' if math.isnan(c) else c},{'' if math.isnan(m) else int(m)},")
    path = tmp_path_factory.mktemp("samples") / "s.csv"
    path.write_text("\n".join(lines) + "\n")
    h = read_samples_file(path, start=T0, end=T0 + 1200, step=step)
    assert h.steps == math.ceil(1200 / step)
    [c] = h.containers
    want_cpu, want_mem = direct([(T0 + t, cpu, mem) for t, cpu, mem in rows], T0, step, h.steps)
    np.testing.assert_allclose(c.cpu, want_cpu, rtol=1e-12, equal_nan=True)
    np.testing.assert_array_equal(c.memory, want_mem)
