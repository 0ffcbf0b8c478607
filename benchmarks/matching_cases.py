"""Random step cases for the matching conformance harness (benchmarks/matching_conformance.py).

A case is one gold step (an edge as the graph builder makes it from one demonstrated
action, on a screen with a hierarchy of elements) and one agent action in ``[0,1000]``,
with the class it was drawn from: taps near, far and on element borders, long presses,
swipes of every angle and length (exact diagonals on the glass and in ``[0,1000]``, tiny
and still ones), texts with case, spacing, punctuation, colons and small edits, the keys,
and an action of another type than the gold's.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from evaluator.matching import ScreenElements
from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    ActionType,
    Bounds,
    MatchRule,
    Size,
)

SCREENS: tuple[Size, ...] = (
    (1080, 2400),
    (1080, 1920),
    (720, 1280),
    (1440, 3200),
    (1080, 2340),
    (1200, 1920),
    (800, 1280),
)
WORDS = (
    "Paris",
    "hello world",
    "Weather tomorrow",
    "张三",
    "10:30",
    "new york city",
    "Café",
    "john.doe@mail.com",
    "buy milk, eggs",
    "A/B test",
    "What time?",
    "OK",
)


@dataclass(frozen=True, slots=True)
class Case:
    """One gold step and one agent action. ``gold`` is the demonstrated action in device
    pixels (None for back/home/enter/wait golds built from the rule alone)."""

    kind: str  # the class the case was drawn from
    screen: Size
    rule: MatchRule
    gold: Action
    agent: Action
    element: Bounds | None = None  # the gold's element, device pixels
    boxes: tuple[Bounds, ...] = ()  # every visible element, device pixels, pre-order
    leaves: tuple[bool, ...] = ()
    extra: dict[str, object] = field(default_factory=dict)

    def elements(self) -> ScreenElements:
        return ScreenElements.from_boxes(self.boxes, leaves=self.leaves, screen=self.screen)


def _screen_tree(rnd: random.Random, screen: Size) -> tuple[list[Bounds], list[bool]]:
    """A plausible screen: a full-screen root, rows, and 1-3 leaves in each row."""
    w, h = screen
    boxes, leaves = [Bounds(0, 0, w, h)], [False]
    y = rnd.randint(0, h // 10)
    while y < h - 40:
        row_h = rnd.randint(h // 40, h // 8)
        bottom = min(h, y + row_h)
        boxes.append(Bounds(0, y, w, bottom))
        leaves.append(False)
        count = rnd.randint(1, 3)
        x = rnd.randint(0, w // 20)
        for _ in range(count):
            cw = rnd.randint(w // 10, max(w // 10 + 1, (w - x) // count))
            right = min(w, x + cw)
            top = y + rnd.randint(0, max(0, row_h // 4))
            low = min(h, max(top + 1, bottom - rnd.randint(0, row_h // 4)))
            boxes.append(Bounds(x, min(top, low), right, low))
            leaves.append(True)
            x = right + rnd.randint(0, w // 20)
            if x >= w - 10:
                break
        y = bottom + rnd.randint(0, h // 30)
    return boxes, leaves


def _agent_near(rnd: random.Random, gx: float, gy: float, element: Bounds, screen: Size) -> Action:
    """An agent's point in [0,1000]: near the gold, far, or exactly on an element border."""
    w, h = screen
    how = rnd.choice(("near", "far", "border", "inside"))
    if how == "border":
        bx = rnd.choice((element.left, element.right, rnd.uniform(element.left, element.right)))
        by = rnd.choice((element.top, element.bottom, rnd.uniform(element.top, element.bottom)))
        return Action.tap(bx * 1000 / w, min(by, h) * 1000 / h, screen=NORMALIZED_SCREEN)
    if how == "inside":
        x, y = rnd.uniform(element.left, element.right), rnd.uniform(element.top, element.bottom)
        return Action.tap(round(x * 1000 / w), round(y * 1000 / h), screen=NORMALIZED_SCREEN)
    spread = 60 if how == "near" else 350
    nx = min(1000, max(0, gx * 1000 / w + rnd.gauss(0, spread)))
    ny = min(1000, max(0, gy * 1000 / h + rnd.gauss(0, spread)))
    return Action.tap(round(nx), round(ny), screen=NORMALIZED_SCREEN)


def _pointed(rnd: random.Random, screen: Size, kind: ActionType, point_only: bool) -> Case:
    boxes, leaves = _screen_tree(rnd, screen)
    pick = [i for i, leaf in enumerate(leaves) if leaf] or [0]
    element = boxes[rnd.choice(pick)]
    gx = rnd.uniform(element.left, max(element.left, element.right - 1))
    gy = rnd.uniform(element.top, max(element.top, element.bottom - 1))
    gx, gy = float(round(gx)), float(round(gy))
    gold = Action(kind, x=gx, y=gy, screen=screen)
    n = gold.normalized()
    assert n.x is not None and n.y is not None
    bounds = None if point_only else element.rescaled(screen, NORMALIZED_SCREEN)
    rule = MatchRule(kind, bounds=bounds, points=((n.x, n.y),))
    agent = _agent_near(rnd, gx, gy, element, screen)
    if kind is ActionType.LONG_PRESS:
        agent = Action.long_press(agent.x or 0, agent.y or 0, screen=NORMALIZED_SCREEN)
    label = "long press" if kind is ActionType.LONG_PRESS else "tap"
    if rnd.random() < 0.12:  # a tiny swipe where a tap was demonstrated
        d = rnd.uniform(0, 60)
        a = rnd.uniform(0, 2 * math.pi)
        x0, y0 = agent.x or 0, agent.y or 0
        agent = Action.swipe(
            x0, y0, x0 + d * math.cos(a), y0 + d * math.sin(a), screen=NORMALIZED_SCREEN
        )
        label = "tiny swipe on a tap"
    return Case(
        f"{label}{' (point only)' if point_only else ''}",
        screen,
        rule,
        gold,
        agent,
        None if point_only else element,
        tuple(boxes),
        tuple(leaves),
    )


def _swipe_vector(rnd: random.Random, length: float) -> tuple[float, float]:
    how = rnd.random()
    if how < 0.25:  # an exact diagonal or axis, whose side depends on the space
        angle = rnd.choice([k * math.pi / 4 for k in range(8)])
    else:
        angle = rnd.uniform(0, 2 * math.pi)
    return length * math.cos(angle), length * math.sin(angle)


def _swipe(rnd: random.Random, screen: Size) -> Case:
    w, h = screen
    length = rnd.uniform(0.06, 0.7) * min(w, h)
    dx, dy = _swipe_vector(rnd, length)
    if rnd.random() < 0.15:  # a diagonal in [0,1000]: dx/w == dy/h
        s = rnd.choice((-1, 1)), rnd.choice((-1, 1))
        dx, dy = s[0] * 0.3 * w, s[1] * 0.3 * h
    x1 = rnd.uniform(max(0, -dx), min(w, w - dx))
    y1 = rnd.uniform(max(0, -dy), min(h, h - dy))
    gold = Action.swipe(round(x1), round(y1), round(x1 + dx), round(y1 + dy), screen=screen)
    rule = MatchRule(ActionType.SWIPE, direction=gold.direction)
    how = rnd.random()
    if how < 0.25:
        alen = rnd.uniform(0, 60)  # tiny or still, in [0,1000]
        label = "short swipe"
    else:
        alen = rnd.uniform(60, 700)
        label = "swipe"
    adx, ady = _swipe_vector(rnd, alen)
    if rnd.random() < 0.15:  # exactly diagonal on the glass
        adx, ady = alen / w * 1000 * rnd.choice((-1, 1)), alen / h * 1000 * rnd.choice((-1, 1))
        label = "glass-diagonal swipe"
    ax = rnd.uniform(max(0, -adx), min(1000, 1000 - adx))
    ay = rnd.uniform(max(0, -ady), min(1000, 1000 - ady))
    integer = rnd.random() < 0.5
    coords = [ax, ay, ax + adx, ay + ady]
    if integer:
        coords = [float(round(c)) for c in coords]
    agent = Action.swipe(*coords, screen=NORMALIZED_SCREEN)
    boxes, leaves = _screen_tree(rnd, screen)
    return Case(label, screen, rule, gold, agent, None, tuple(boxes), tuple(leaves))


def _edit(rnd: random.Random, text: str) -> tuple[str, str]:
    how = rnd.choice(
        ("same", "case", "spaces", "edit", "contained", "container", "other", "colon", "punct")
    )
    if how == "same":
        return text, how
    if how == "case":
        return rnd.choice((text.upper(), text.lower(), text.title(), text.swapcase())), how
    if how == "spaces":
        return rnd.choice((f" {text} ", text.replace(" ", "  "), text.replace(" ", ""))), how
    if how == "edit":
        chars = list(text)
        for _ in range(rnd.randint(1, 3)):
            i = rnd.randrange(len(chars) + 1)
            op = rnd.choice(("insert", "delete", "replace"))
            if op == "insert" or not chars:
                chars.insert(i, rnd.choice("abcxyz "))
            elif op == "delete" and i < len(chars):
                del chars[i]
            elif i < len(chars):
                chars[i] = rnd.choice("abcxyz")
        return "".join(chars) or "x", how
    if how == "contained":
        cut = rnd.randint(1, len(text))
        return (text[:cut] if rnd.random() < 0.5 else text[-cut:]) or text, how
    if how == "container":
        return rnd.choice((f"{text} please", f"my {text}", f"{text}{text}")), how
    if how == "colon":
        return rnd.choice((f"{text}: now", f"note:{text}", text.replace(" ", ":"))), how
    if how == "punct":
        return rnd.choice((f"{text}?", text.replace(" ", "/"), f"“{text}”", f"{text}。")), how
    return rnd.choice([w for w in WORDS if w != text]), how


def _typing(rnd: random.Random, screen: Size) -> Case:
    text = rnd.choice(WORDS)
    typed, how = _edit(rnd, text)
    rule = MatchRule(ActionType.TYPE, texts=(text,), text_threshold=80.0)
    boxes, leaves = _screen_tree(rnd, screen)
    return Case(
        f"text {how}",
        screen,
        rule,
        Action.type_text(text),
        Action.type_text(typed),
        None,
        tuple(boxes),
        tuple(leaves),
    )


KEYS = ("back", "home", "enter", "wait")


def _keyed(name: str) -> tuple[MatchRule, Action]:
    if name == "enter":
        return MatchRule(ActionType.KEY, texts=("enter",)), Action.key("enter")
    t = ActionType(name)
    return MatchRule(t), Action(t)


def _key(rnd: random.Random, screen: Size, keys: tuple[str, ...]) -> Case:
    gold_name, agent_name = rnd.choice(keys), rnd.choice(keys)
    rule, gold = _keyed(gold_name)
    _, agent = _keyed(agent_name)
    boxes, leaves = _screen_tree(rnd, screen)
    return Case("keys", screen, rule, gold, agent, None, tuple(boxes), tuple(leaves))


def _other_type(rnd: random.Random, screen: Size, keys: tuple[str, ...]) -> Case:
    """An agent action of another type than the gold's."""
    a = draw(rnd, keys, plain=True)
    b = draw(rnd, keys, plain=True)
    while b.rule.action_type is a.rule.action_type:
        b = draw(rnd, keys, plain=True)
    return Case("another type", a.screen, a.rule, a.gold, b.agent, a.element, a.boxes, a.leaves)


def draw(rnd: random.Random, keys: tuple[str, ...] = KEYS, *, plain: bool = False) -> Case:
    """One random case; ``keys`` are the special actions the benchmark has."""
    screen = rnd.choice(SCREENS)
    roll = rnd.random()
    if not plain and roll < 0.08:
        return _other_type(rnd, screen, keys)
    if roll < 0.36:
        return _pointed(rnd, screen, ActionType.TAP, point_only=rnd.random() < 0.25)
    if roll < 0.44:
        return _pointed(rnd, screen, ActionType.LONG_PRESS, point_only=rnd.random() < 0.25)
    if roll < 0.70:
        return _swipe(rnd, screen)
    if roll < 0.90:
        return _typing(rnd, screen)
    return _key(rnd, screen, keys)
