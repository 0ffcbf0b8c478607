"""Device-farm throughput: steps per second against the number of virtual phones, with the
local and the Ray executor on one host, and the memory each phone's worker takes.

    .venv/bin/python benchmarks/bench_farm.py [--phones 1 2 4] [--repeats 3]

Runs the sample suite's online tasks with the replay agent on fast virtual phones (no
settle delays, so the figure is the harness's own cost, not a phone's animation time).
Reports per configuration the median steps per second, the Ray/local ratio, and for Ray
the median resident memory of one device worker process. Ray starts once per phone count
(its start-up is reported apart, not counted in the runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.farm.log import read_farm_log  # noqa: E402
from evaluator.farm.pool import FarmSettings  # noqa: E402
from evaluator.farm.ray_executor import LOCAL_OBJECT_STORE, resource_name  # noqa: E402
from evaluator.run_store import RunStore  # noqa: E402
from evaluator.runner import RunConfig, iter_run  # noqa: E402
from graph_builder.model import EvalProtocol  # noqa: E402
from virtual_phone import fast_phone, running_server  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "task_graphs" / "sample"


def _rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def run_once(server, devices: tuple[str, ...], executor: str, out: Path) -> tuple[float, list]:
    for serial in [p.serial for p in server.phones]:
        server.remove_phone(serial)
    for address in devices:
        server.add_phone(fast_phone(address.split("@", 1)[0]))
    config = RunConfig(
        suite=SAMPLE,
        out=out,
        agent="replay",
        protocol=EvalProtocol.ONLINE,
        devices=devices,
        farm=FarmSettings(executor=executor),
    )
    start = time.perf_counter()
    rss = []
    for _event in iter_run(config):
        for e in read_farm_log(out):
            pid = e.get("worker_pid")
            if pid and (kib := _rss_kib(pid)):
                rss.append(kib)
    seconds = time.perf_counter() - start
    steps = sum(r.steps for r in RunStore.open(out).results())
    return steps / seconds, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--phones", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import ray

    os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")
    with running_server(phones=[]) as server, tempfile.TemporaryDirectory() as tmp:
        for n in args.phones:
            devices = tuple(f"virtual-{i + 1}@127.0.0.1:{server.port}" for i in range(n))
            began = time.perf_counter()
            ray.init(
                num_cpus=max(2, n),
                resources={resource_name(d): 1 for d in devices},
                object_store_memory=LOCAL_OBJECT_STORE,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
            ray_start = time.perf_counter() - began
            rates: dict[str, list[float]] = {"local": [], "ray": []}
            memory: list[int] = []
            for r in range(args.repeats):
                for executor in ("local", "ray"):
                    out = Path(tmp) / f"{n}-{executor}-{r}"
                    rate, rss = run_once(server, devices, executor, out)
                    rates[executor].append(rate)
                    memory += rss
            ray.shutdown()
            local, remote = (statistics.median(rates[k]) for k in ("local", "ray"))
            mem = f"{statistics.median(memory) / 1024:.0f} MiB" if memory else "n/a"
            print(
                f"{n} phone(s): local {local:.1f} steps/s, ray {remote:.1f} steps/s "
                f"(ray/local {remote / local:.2f}); ray worker RSS {mem}; "
                f"ray start {ray_start:.1f} s"
            )


if __name__ == "__main__":
    main()
