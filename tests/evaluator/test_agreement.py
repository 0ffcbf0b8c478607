"""report --agreement: offline against online verdicts on two constructed runs, with
kappa and the Wilson interval checked against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from elderbench.cli import main
from evaluator.agreement import agreement
from evaluator.records import TaskResult, TaskStatus
from evaluator.run_store import HumanVerdict, RunStore
from evaluator.run_summary import summarize

S, F, E = TaskStatus.SUCCESS, TaskStatus.FAILURE, TaskStatus.ERROR
# task: (offline, online). Paired: a, b both succeed; h offline only; c, d online only;
# e, f, g both fail. i is an error online (left out, counted); j was only run offline.
OUTCOMES = {
    "a": (S, S),
    "b": (S, S),
    "c": (F, S),
    "d": (F, S),
    "e": (F, F),
    "f": (F, F),
    "g": (F, F),
    "h": (S, F),
    "i": (S, E),
    "j": (F, None),
}


def _results(protocol: str, side: int) -> list[TaskResult]:
    return [
        TaskResult(task, pair[side], protocol, terminated=True)
        for task, pair in OUTCOMES.items()
        if pair[side] is not None
    ]


def _wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_the_table_kappa_and_false_negative_rate_by_hand():
    found = agreement(_results("offline", 0), _results("online", 1))
    data = found.to_json()
    assert data["paired_tasks"] == 8
    assert [data[c] for c in ("both_succeed", "offline_only", "online_only", "both_fail")] == [
        2,
        1,
        2,
        3,
    ]
    # Observed agreement 5/8; offline says success 3/8, online 4/8, so chance agreement
    # is 3/8 * 4/8 + 5/8 * 4/8 = 1/2 and kappa = (5/8 - 1/2) / (1 - 1/2) = 1/4.
    assert data["observed_agreement"] == pytest.approx(0.625)
    assert data["kappa"] == pytest.approx(0.25)
    # Online successes a, b, c, d; offline failed c and d: 2 of 4. The Wilson interval of
    # 2/4 is 0.5 -+ 0.34997 = (0.15003, 0.84997).
    assert data["false_negative_rate"] == pytest.approx(0.5)
    assert data["false_negative_base"] == 4
    low, high = data["false_negative_ci"]
    assert (low, high) == pytest.approx(_wilson_by_hand(2, 4))
    assert (low, high) == pytest.approx((0.15003, 0.84997), abs=1e-5)
    assert data["excluded_errors"] == ["i"]
    assert data["only_in_offline_run"] == ["j"] and data["only_in_online_run"] == []
    assert {p["task_id"]: p["cell"] for p in data["per_task"]}["h"] == "offline_only"


def test_only_each_runs_own_protocol_counts_and_human_verdicts_apply():
    offline = [*_results("offline", 0), TaskResult("k", S, "online", terminated=True)]
    online = _results("online", 1)
    found = agreement(offline, online, {}, {"e": HumanVerdict(True)})
    cells = {p.task_id: p.cell for p in found.pairs}
    assert "k" not in cells
    assert cells["e"] == "online_only"  # the human turned the online failure into a success


def test_kappa_is_undefined_when_both_runs_give_one_verdict():
    found = agreement(
        [TaskResult("a", F, "offline"), TaskResult("b", F, "offline")],
        [TaskResult("a", F, "online"), TaskResult("b", F, "online")],
    )
    assert found.kappa is None and found.false_negative_rate is None


def _run_folder(path, protocol: str, side: int):
    store = RunStore.create(path, {"agent": {"name": "heuristic"}})
    for result in _results(protocol, side):
        store.append_result(result)
    store.close()
    return path


def test_report_agreement_prints_the_table_with_its_bases(tmp_path, capsys):
    offline = _run_folder(tmp_path / "offline", "offline", 0)
    online = _run_folder(tmp_path / "online", "online", 1)
    assert main(["report", str(offline), "--agreement", str(online)]) == 0
    out = capsys.readouterr().out
    assert "on the 8 tasks evaluated in both" in out
    assert "| c |  |  | 1 |  |" in out
    assert "| total | 2 | 1 | 2 | 3 |" in out
    assert "Cohen's kappa 0.250 over the same 8" in out
    assert "50.0% (2 of 4; 95% Wilson interval 15.0%-85.0%)" in out
    assert "Left out, error in one run or both: 1 (i)." in out
    assert "Left out, only in the offline run: 1 (j)." in out
    assert summarize(offline, agreement_with=online).agreement == {
        "online_run": str(online),
        **agreement(_results("offline", 0), _results("online", 1)).to_json(),
    }
    assert main(["report", str(offline), "--agreement", str(online), "--json"]) == 0
    assert '"kappa": 0.25' in capsys.readouterr().out


def test_offline_tasks_with_online_criteria_run_both_ways_on_the_virtual_phone(
    tmp_path, virtual_server
):
    from devices.android import AndroidDevice, adb_client
    from evaluator.runner import RunConfig, run_suite
    from task_graphs.generate import SUITE_DIR

    tasks = ("doctor_when", "rain_tomorrow")

    def run(name: str, protocol: str) -> None:
        run_suite(
            RunConfig(
                suite=SUITE_DIR,
                out=tmp_path / name,
                agent="heuristic",
                variant="normalized",
                protocol=protocol,
                tasks=tasks,
                devices=("virtual-1",),
            ),
            device_factory=lambda serial: AndroidDevice(
                serial, client=adb_client(port=virtual_server.port)
            ),
        )

    run("offline", "offline")
    run("online", "online")
    found = summarize(tmp_path / "offline", agreement_with=tmp_path / "online").agreement
    assert found is not None and found["paired_tasks"] == 2 and not found["excluded_errors"]
    # rain_tomorrow: both succeed. doctor_when: the heuristic taps the compose box on the
    # final screen; the graph has no such edge, the phone's final screen passes the rule.
    assert {p["task_id"]: p["cell"] for p in found["per_task"]} == {
        "rain_tomorrow": "both_succeed",
        "doctor_when": "online_only",
    }
    assert found["false_negative_rate"] == pytest.approx(0.5)
