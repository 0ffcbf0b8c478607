"""State identity by role: what the widgets say a text is decides whether it may change."""

from __future__ import annotations

import dataclasses

import pytest

from graph_builder.hierarchy import parse_hierarchy
from graph_builder.merge import merge_demonstrations
from graph_builder.model import Action
from graph_builder.roles import learn_ambient_slots, screen_tokens
from graph_builder.similarity import Features, SimilaritySettings, Verdict, compare_features
from tests.graph_builder.gb_synthetic import Sketch, demo

S = SimilaritySettings()
A = "com.example.app"


def node(
    cls: str, *, rid: str = "", bounds: str = "[0,0][1080,200]", kids: str = "", **attrs: str
) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    res = f' resource-id="{A}:id/{rid}"' if rid else ""
    return f'<node class="android.{cls}" package="{A}"{res} bounds="{bounds}"{extra}>{kids}</node>'


def screen(*children: str) -> str:
    root = node("widget.FrameLayout", bounds="[0,0][1080,2400]", kids="".join(children))
    return f'<hierarchy rotation="0">{root}</hierarchy>'


def toolbar(title: str) -> str:
    return node(
        "widget.FrameLayout",
        rid="toolbar",
        bounds="[0,80][1080,240]",
        kids=node("widget.TextView", bounds="[40,100][800,220]", text=title),
    )


def row(i: int, title: str, summary: str = "", **flags: str) -> str:
    top = 300 + i * 200
    kids = node("widget.TextView", rid="title", bounds=f"[40,{top}][900,{top + 80}]", text=title)
    if summary:
        kids += node(
            "widget.TextView",
            rid="summary",
            bounds=f"[40,{top + 90}][900,{top + 160}]",
            text=summary,
        )
    return node(
        "widget.LinearLayout",
        rid="row",
        bounds=f"[0,{top}][1080,{top + 190}]",
        clickable="true",
        kids=kids,
        **flags,
    )


def listing(*rows: str) -> str:
    return node(
        "widget.ListView",
        rid="list",
        bounds="[0,240][1080,2200]",
        scrollable="true",
        kids="".join(rows),
    )


def features(xml: str, *, hash_value: int = 0, settings: SimilaritySettings = S) -> Features:
    return Features(hash_value, 256, f"{A}/.Main", screen_tokens(parse_hierarchy(xml), settings))


def judge(a: str, b: str, *, far: bool = False, settings: SimilaritySettings = S) -> Verdict:
    """The verdict on two hierarchies; ``far`` makes their screenshots' hashes differ a lot."""
    other = (1 << 100) - 1 if far else 0  # 100 of 256 bits: visual 0.61
    return compare_features(
        features(a, settings=settings), features(b, hash_value=other, settings=settings), settings
    )


def test_summaries_list_rows_and_badges_are_ambient() -> None:
    a = screen(
        toolbar("Settings"), listing(row(0, "Wi-Fi", "Home network"), row(1, "Bluetooth", "Off"))
    )
    b = screen(toolbar("Settings"), listing(row(0, "Wi-Fi", "Cafe"), row(1, "Bluetooth", "On")))
    verdict = judge(a, b)
    assert verdict.same and "ambient texts differ" in verdict.reason
    tokens = screen_tokens(parse_hierarchy(a), S)
    assert tokens.state == {"[title] settings": 1.0}
    assert {"wi-fi", "home network"} <= tokens.ambient
    icon = node(
        "widget.TextView",
        bounds="[0,300][200,500]",
        text="Mail",
        content_desc="Mail has 3 notifications",
    )
    assert "mail has 3 notifications" in screen_tokens(parse_hierarchy(screen(icon)), S).ambient


def test_a_refreshed_list_is_the_same_state_but_another_list_is_not() -> None:
    rows = [row(i, f"Order {n}") for i, n in enumerate((101, 102, 103, 104))]
    refreshed = [row(0, "Order 100")] + [
        row(i + 1, f"Order {n}") for i, n in enumerate((101, 102, 103))
    ]
    assert judge(
        screen(toolbar("Orders"), listing(*rows)), screen(toolbar("Orders"), listing(*refreshed))
    ).same
    other = [row(i, f"File {n}") for i, n in enumerate("abcd")]
    verdict = judge(
        screen(toolbar("Orders"), listing(*rows)), screen(toolbar("Orders"), listing(*other))
    )
    assert not verdict.same and "the lists show other items" in verdict.reason


@pytest.mark.parametrize("flag", ["checked", "selected"])
def test_another_checked_or_selected_choice_in_a_list_is_another_state(flag: str) -> None:
    def page(chosen: int) -> str:
        extra = {"checkable": "true"} if flag == "checked" else {}
        return screen(
            toolbar("Ringtone"),
            listing(
                *(
                    row(i, name, **extra, **{flag: str(i == chosen).lower()})
                    for i, name in enumerate(("Bells", "Chime", "Harp"))
                )
            ),
        )

    verdict = judge(page(0), page(1))
    assert not verdict.same and verdict.reason.startswith("state differs")
    assert judge(page(2), page(2), far=True).reason.startswith("visual")  # nothing explains it


def test_typed_text_is_state_and_a_keyboard_is_not() -> None:
    def form(typed: str, bottom: int, focused: str = "true") -> str:
        link_top = bottom - 200  # the keyboard's window leaves it out of the dump
        field = node(
            "widget.EditText", rid="email", bounds="[40,400][1000,500]", text=typed, focused=focused
        )
        link = node(
            "widget.Button",
            rid="create",
            bounds=f"[40,{link_top}][1000,{link_top + 100}]",
            text="Create account",
        )
        labels = "".join(
            node("widget.TextView", bounds=f"[40,{300 + 30 * i}][1000,{320 + 30 * i}]", text=t)
            for i, t in enumerate(("Email", "Use the address you signed up with"))
        )
        return screen(
            toolbar("Sign in"),
            node(
                "widget.LinearLayout",
                rid="form",
                bounds=f"[0,240][1080,{bottom}]",
                kids=labels + field + (link if bottom > 2000 else ""),
            ),
        )

    different = judge(form("ann@example.org", 2200), form("bob@example.org", 2200))
    assert not different.same and "'[typed] ann@example.org'" in different.reason
    # The keyboard resized the window: the button under it is hidden, the picture moved.
    with_keyboard = judge(form("ann@example.org", 2200), form("ann@example.org", 1300), far=True)
    assert with_keyboard.same, with_keyboard.describe()
    assert "under the keyboard or scrolled out" in with_keyboard.reason


def test_the_hash_decides_when_the_hierarchy_cannot_explain_the_picture() -> None:
    notes = "".join(
        node(
            "widget.TextView",
            rid=f"note{i}",
            bounds=f"[40,{2210 + 40 * i}][1000,{2240 + 40 * i}]",
            text=t,
        )
        for i, t in enumerate(("Synced", "3 folders", "Storage almost full"))
    )
    page = screen(toolbar("Inbox"), listing(row(0, "Hi"), row(1, "Lunch?")), notes)
    verdict = judge(page, page, far=True)
    assert not verdict.same and "no keyboard or scroll to explain the picture" in verdict.reason
    assert judge(page, page).same


def test_a_dialog_sentence_is_its_question_but_a_page_status_may_be_reworded() -> None:
    def dialog(message: str) -> str:
        text = node(
            "widget.TextView", rid="permission_message", bounds="[60,900][1000,1100]", text=message
        )
        allow = node(
            "widget.Button",
            rid="allow",
            bounds="[600,1150][1000,1250]",
            text="Allow",
            clickable="true",
        )
        return screen(
            node(
                "widget.LinearLayout",
                rid="dialog_container",
                bounds="[40,850][1040,1300]",
                kids=text + allow,
            )
        )

    asked = judge(
        dialog("Allow Volume to access photos and media on your device?"),
        dialog("Allow Volume to send and view SMS messages on the phone?"),
    )
    assert not asked.same
    status = judge(
        screen(
            toolbar("Route"),
            node(
                "widget.TextView",
                rid="status",
                bounds="[40,400][1000,500]",
                text="Current location is outside the area, using a fallback origin",
            ),
        ),
        screen(
            toolbar("Route"),
            node(
                "widget.TextView",
                rid="status",
                bounds="[40,400][1000,500]",
                text="Timed out while requesting a GPS fix, using the cached origin",
            ),
        ),
    )
    assert status.same


def test_counts_in_titles_are_ambient_and_typed_texts_stay_state_where_they_show_again() -> None:
    a = screen(toolbar("12"), listing(row(0, "Hi Ann"), row(1, "Lunch?")))
    b = screen(toolbar("13"), listing(row(0, "Hi Ann"), row(1, "Lunch?")))
    assert judge(a, b).same
    sent = screen(
        toolbar("Ann"), listing(row(0, "Hi Ann"), row(1, "Lunch?"), row(2, "See you at noon"))
    )
    before = screen(toolbar("Ann"), listing(row(0, "Hi Ann"), row(1, "Lunch?")))
    assert judge(before, sent).same  # a new row alone is a refresh
    typed = dataclasses.replace(S, user_texts=("See you at noon",))
    verdict = judge(before, sent, settings=typed)
    assert not verdict.same and "[entered] see you at noon" in verdict.reason


def test_a_slider_keeps_the_picture_in_the_decision() -> None:
    slider = node(
        "widget.SeekBar", rid="level", bounds="[40,400][1000,500]", content_desc="Brightness"
    )
    page = screen(toolbar("Brightness"), slider)
    assert not judge(page, page, far=True).same
    assert judge(page, page).same


def test_the_score_is_a_probability_that_orders_the_decisions() -> None:
    same = judge(
        screen(toolbar("A"), listing(row(0, "x"), row(1, "y"), row(2, "w"))),
        screen(toolbar("A"), listing(row(0, "x"), row(1, "y"), row(2, "z"))),
    )
    other = judge(screen(toolbar("A")), screen(toolbar("B")))
    assert 0.5 < same.score <= 1.0 and 0.0 <= other.score < 0.5
    assert "p(same)" in same.describe()


def test_a_task_learns_a_slot_whose_text_alone_changes_over_visits() -> None:
    def home(greeting: str) -> str:
        return screen(
            toolbar("Home"),
            node("widget.TextView", rid="greeting", bounds="[40,400][1000,500]", text=greeting),
        )

    visits = [
        (f"d{i}", screen_tokens(parse_hierarchy(home(g)), S))
        for i, g in enumerate(("Good morning", "Good evening", "Hello again"))
    ]
    assert learn_ambient_slots(visits, S) == ("FrameLayout#/TextView#greeting",)
    assert learn_ambient_slots(visits[:2], S) == ()  # two values could be a real change
    same_demo = [("d1", tokens) for _, tokens in visits]
    assert learn_ambient_slots(same_demo, S) == ()  # one demonstration's own changes teach nothing


def test_the_build_learns_ambient_slots_from_the_task_and_says_so() -> None:
    screens = [
        Sketch("Home", ("Start",), extra={"greeting": g})
        for g in ("Good morning", "Good evening", "Hello again")
    ]
    done = Sketch("Done", ("Back",))
    demos = [
        demo(f"d{i}", [(s, Action.tap(135, 120, screen=(270, 600))), (done, Action.done())])
        for i, s in enumerate(screens)
    ]
    result = merge_demonstrations(demos, settings=S)
    assert [n.id for n in result.graph.nodes] == ["start", "done"]
    assert result.learned_ambient == ("FrameLayout#/TextView#greeting",)
    assert list(result.graph.meta["learned_ambient"]) == ["FrameLayout#/TextView#greeting"]
    assert "ambient_slots" in result.graph.meta["settings"]
    unlearned = merge_demonstrations(demos, settings=dataclasses.replace(S, learn_ambient=False))
    assert [w for w in unlearned.warnings if "does not look like" in w]


def test_a_dialog_question_is_never_learned_as_ambient() -> None:
    def asking(what: str) -> str:
        message = node(
            "widget.TextView", rid="permission_message", bounds="[60,900][1000,1000]", text=what
        )
        allow = node("widget.Button", rid="allow", bounds="[600,1100][1000,1200]", text="Allow")
        box = node(
            "widget.LinearLayout",
            rid="dialog_container",
            bounds="[40,850][1040,1300]",
            kids=message + allow,
        )
        return screen(box)

    questions = ("Allow access to photos?", "Allow access to SMS?", "Allow access to contacts?")
    visits = [
        (f"d{i}", screen_tokens(parse_hierarchy(asking(q)), S)) for i, q in enumerate(questions)
    ]
    assert learn_ambient_slots(visits, S) == ()
