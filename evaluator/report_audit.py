"""The report's sections on what the graph may have missed: the SR bounds that audit
marks imply (``evaluator.bounds``) and the agreement of offline and online verdicts
(``evaluator.agreement``). Each takes the JSON that ``run_summary`` holds."""

from __future__ import annotations

from typing import Any

from evaluator.document import Block, Table, percent


def _names(tasks: list[str], limit: int = 8) -> str:
    shown = ", ".join(tasks[:limit])
    return shown + (f" and {len(tasks) - limit} more" if len(tasks) > limit else "")


def bounds_blocks(bounds: dict[str, Any] | None) -> list[Block]:
    """Strict and upper SR, with the undetermined episodes counted and named."""
    if not bounds or not bounds["n"]:
        return []
    left = bounds["undetermined"] or bounds["unmarked_tasks"] or bounds["unsure_tasks"]
    if not left and not bounds["problems"]:
        return []  # no failure left the graph: both bounds are the SR
    n, k = bounds["n"], bounds["undetermined"]
    blocks: list[Block] = [
        ("h2", "SR bounds from audit marks"),
        Table(
            ("", "SR", "Successes", "Base"),
            [
                [
                    "Strict",
                    percent(bounds["strict_sr"]),
                    str(bounds["successes"]),
                    f"{n} evaluated",
                ],
                [
                    "Upper bound",
                    percent(bounds["upper_sr"]),
                    f"{bounds['successes']} + {k} undetermined",
                    f"{n} evaluated",
                ],
            ],
        ),
        (
            "p",
            f"{k} of {n} evaluated episodes are undetermined: they failed only by taking an "
            "unexplored branch that a person marked valid (elderbench audit), so the graph "
            "cannot score them; the upper bound counts them as successes."
            + (f" Undetermined: {_names(bounds['undetermined_tasks'])}." if k else ""),
        ),
    ]
    waiting = bounds["unmarked_tasks"]
    unsure = bounds["unsure_tasks"]
    if waiting or unsure:
        blocks.append(
            (
                "p",
                f"Not yet bounded: {len(waiting)} failure(s) left the graph on a branch nobody "
                f"has marked ({_names(waiting)}) and {len(unsure)} on one marked unsure"
                + (f" ({_names(unsure)})" if unsure else "")
                + "; both count as failures in either bound.",
            )
        )
    for problem in bounds["problems"]:
        blocks.append(("p", f"Marks not read: {problem}"))
    return blocks


def agreement_blocks(found: dict[str, Any] | None) -> list[Block]:
    """Both succeed / offline only / online only / both fail, per task and in total,
    kappa and the offline false-negative rate, each with its base."""
    if found is None:
        return []
    cells = ("both_succeed", "offline_only", "online_only", "both_fail")
    n = found["paired_tasks"]
    rows = [
        [p["task_id"], *("1" if p["cell"] == c else "" for c in cells)] for p in found["per_task"]
    ]
    rows.append(["total", *(str(found[c]) for c in cells)])
    kappa = found["kappa"]
    base = found["false_negative_base"]
    fnr = found["false_negative_rate"]
    ci = found["false_negative_ci"]
    blocks: list[Block] = [
        ("h2", "Offline against online"),
        (
            "p",
            f"This (offline) run against the online run {found['online_run']}, on the {n} "
            "tasks evaluated in both (a task that is an error in either run is left out).",
        ),
        Table(("Task", "Both succeed", "Offline only", "Online only", "Both fail"), rows),
        (
            "p",
            f"Observed agreement {percent(found['observed_agreement'])} of {n} paired tasks; "
            "Cohen's kappa "
            + ("undefined (one verdict only on both sides)" if kappa is None else f"{kappa:.3f}")
            + f" over the same {n}.",
        ),
        (
            "p",
            "Offline false-negative rate (online success, offline failure, over online "
            + (
                f"successes): {percent(fnr)} ({found['online_only']} of {base}; 95% Wilson "
                f"interval {percent(ci[0])}-{percent(ci[1])})."
                if fnr is not None and ci
                else "successes): n/a, no online success among the paired tasks."
            ),
        ),
    ]
    left = [
        (found["excluded_errors"], "error in one run or both"),
        (found["only_in_offline_run"], "only in the offline run"),
        (found["only_in_online_run"], "only in the online run"),
    ]
    for tasks, why in left:
        if tasks:
            blocks.append(("p", f"Left out, {why}: {len(tasks)} ({_names(tasks)})."))
    return blocks
