"""A tiny agent program speaking the subprocess JSON-lines protocol (see docs/agents.md).

It taps the first button whose text appears in the instruction and that it has not tapped
yet, else says done. ``--mode garbage`` answers non-JSON, ``--mode crash`` exits at the
first step, ``--mode slow`` never answers; ``--delay S`` waits S seconds per step.
"""

from __future__ import annotations

import json
import re
import sys
import time


def main() -> None:
    mode = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else "normal"
    delay = float(sys.argv[sys.argv.index("--delay") + 1]) if "--delay" in sys.argv else 0.0
    instruction = ""
    tapped: set[str] = set()
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "reset":
            instruction, tapped = message["instruction"], set()
            continue
        if message["type"] == "close":
            break
        time.sleep(delay)
        if mode == "crash":
            sys.exit(3)
        if mode == "slow":
            time.sleep(30)
        if mode == "garbage":
            print("I think I will tap the blue button", flush=True)
            continue
        answer = {"action": {"action": "done"}, "reasoning": "nothing left", "input_tokens": 7}
        xml = ""
        if message["hierarchy"]:
            with open(message["hierarchy"], encoding="utf-8") as fh:
                xml = fh.read()
        for text, left, top, right, bottom in re.findall(
            r'text="([^"]+)"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', xml
        ):
            if text in instruction and text not in tapped and "Button" in xml:
                tapped.add(text)
                w, h = message["screen"]
                x, y = (int(left) + int(right)) / 2, (int(top) + int(bottom)) / 2
                answer = {
                    "action": {"type": "tap", "x": x, "y": y, "screen": [w, h]},
                    "raw_output": f"tap {text}",
                    "reflection": "correct",
                    "output_tokens": 3,
                }
                break
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
