"""The sample suite's tasks, and the scripted paths that demonstrate or solve them.

Every task is written twice: as an older adult might say it (short, elliptical, indirect,
ambiguous, self-correcting, a few in Chinese) and as a normalized rewrite that is concise,
explicit and names what to do in the app's own words.

Offline tasks carry three or more demonstration paths, different where the app allows;
``task_graphs.generate`` records each path on the virtual phone and builds the task graph
from them. Online tasks carry one solution path; the generator records it too (for the
replay agent) and checks that the task's rule criteria fail on the first screen and pass
on the last one.

A path is a tuple of steps in a tiny language whose targets are found on the screen at
recording time, so paths survive layout changes of the virtual phone::

    (tap("Display"), tap("Font size"), tap_desc("Make larger"), done())

>>> tap("Display").describe()
"tap 'Display'"
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from graph_builder.hierarchy import Hierarchy, UIElement
from graph_builder.model import (
    Action,
    EvalProtocol,
    Labels,
    ResetRecipe,
    SettingValue,
    Size,
    SuccessCriteria,
    Task,
)

# --------------------------------------------------------------------------- step language


class StepKind(StrEnum):
    TAP = "tap"  # the element whose text is ``target``
    TAP_DESC = "tap_desc"  # the element whose content description is ``target``
    SLIDE = "slide"  # a tap at ``fraction`` of the width of the element described ``target``
    SWIPE = "swipe"  # from (x1, y1) to (x2, y2), fractions of the screen
    TYPE = "type"
    BACK = "back"
    DONE = "done"


class StepError(ValueError):
    """A step whose target is not on the screen (the path no longer fits the phone)."""


@dataclass(frozen=True, slots=True)
class Step:
    kind: StepKind
    target: str = ""
    nth: int = 0  # which match, in document order, when several elements carry the target
    fraction: float = 0.5
    line: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)

    def describe(self) -> str:
        if self.kind in (StepKind.TAP, StepKind.TAP_DESC, StepKind.TYPE):
            return f"{self.kind.value} {self.target!r}"
        if self.kind is StepKind.SLIDE:
            return f"slide {self.target!r} to {self.fraction:.0%}"
        return self.kind.value

    def action(self, hierarchy: Hierarchy, screen: Size) -> Action:
        """The action this step means on a screen, in its pixels; taps name their element
        the way the recorder does (the clickable element under the point)."""
        if self.kind is StepKind.SWIPE:
            w, h = screen
            x1, y1, x2, y2 = self.line
            return Action.swipe(
                round(x1 * w), round(y1 * h), round(x2 * w), round(y2 * h), screen=screen
            )
        if self.kind is StepKind.TYPE:
            return Action.type_text(self.target)
        if self.kind in _BY_TYPE:
            return _BY_TYPE[self.kind]()
        element = self._find(hierarchy)
        bounds = element.bounds
        x = round(bounds.left + bounds.width * self.fraction)
        y = round(bounds.center[1])
        under = hierarchy.element_at(x, y)
        return Action.tap(x, y, screen=screen, element=under.ref() if under else None)

    def _find(self, hierarchy: Hierarchy) -> UIElement:
        by_text = self.kind is StepKind.TAP
        found = [
            e for e in hierarchy.visible() if (e.text if by_text else e.content_desc) == self.target
        ]
        if len(found) <= self.nth:
            on_screen = ", ".join(
                sorted({e.text or e.content_desc for e in hierarchy.visible()} - {""})
            )
            raise StepError(
                f"{self.describe()}: {len(found)} such element(s) on the screen; it shows: "
                f"{on_screen[:600]}"
            )
        return found[self.nth]


_BY_TYPE: dict[StepKind, Callable[[], Action]] = {
    StepKind.BACK: Action.back,
    StepKind.DONE: Action.done,
}


def tap(text: str, *, nth: int = 0) -> Step:
    return Step(StepKind.TAP, text, nth=nth)


def tap_desc(desc: str, *, nth: int = 0) -> Step:
    return Step(StepKind.TAP_DESC, desc, nth=nth)


def slide(desc: str, fraction: float) -> Step:
    """Tap a slider (found by its content description) at ``fraction`` of its width."""
    return Step(StepKind.SLIDE, desc, fraction=fraction)


def swipe_up() -> Step:
    """Scroll the list under the finger towards its end."""
    return Step(StepKind.SWIPE, line=(0.5, 0.72, 0.5, 0.32))


def swipe_down() -> Step:
    """Scroll the list under the finger back towards its start."""
    return Step(StepKind.SWIPE, line=(0.5, 0.32, 0.5, 0.72))


def open_shade() -> Step:
    """Pull the notification shade down from the status bar."""
    return Step(StepKind.SWIPE, line=(0.5, 0.01, 0.5, 0.5))


def type_text(text: str) -> Step:
    return Step(StepKind.TYPE, text)


def back() -> Step:
    return Step(StepKind.BACK)


def done() -> Step:
    return Step(StepKind.DONE)


Path = tuple[Step, ...]

# --------------------------------------------------------------------------- apps

LAUNCHER = "com.android.launcher3"
SETTINGS = "com.android.settings"
DIALER = "com.android.dialer"
CONTACTS = "com.android.contacts"
MESSAGES = "com.android.messaging"
CLOCK = "com.android.deskclock"
WEATHER = "com.elderphone.weather"
PHARMACY = "com.elderphone.pharmacy"

IN_CALL = "com.android.dialer/com.android.incallui.InCallActivity"
CONTACT_CARD = "com.android.contacts/com.android.contacts.quickcontact.QuickContactActivity"
THREAD = "com.android.messaging/com.android.messaging.ui.conversation.ConversationActivity"
ALARMS = "com.android.deskclock/com.android.deskclock.DeskClock"
WEATHER_TODAY = "com.elderphone.weather/com.elderphone.weather.MainActivity"
WEATHER_DAY = "com.elderphone.weather/com.elderphone.weather.DayActivity"
SUBSETTINGS = "com.android.settings/com.android.settings.SubSettings"
WEATHER_SETTINGS = "com.elderphone.weather/com.elderphone.weather.SettingsActivity"
ORDERS = "com.elderphone.pharmacy/com.elderphone.pharmacy.ui.OrdersActivity"


def from_home() -> ResetRecipe:
    """Start on the home screen: choosing the app is part of the task."""
    return ResetRecipe(LAUNCHER)


# Online tasks share one phone, so each restores the system settings that any of them
# changes: an earlier task's larger font would move every later task's screen.
SYSTEM_DEFAULTS: tuple[tuple[str, str, str], ...] = (
    ("system", "font_scale", "1.0"),
    ("global", "airplane_mode_on", "0"),
    ("global", "wifi_on", "1"),
)


def in_app(package: str, *settings: tuple[str, str, str]) -> ResetRecipe:
    """Start in ``package`` with its data as installed, after restoring system ``settings``
    (namespace, key, value) that an earlier task may have changed."""
    return ResetRecipe(package, clear_data=True, settings=tuple(SettingValue(*v) for v in settings))


# --------------------------------------------------------------------------- recipes


@dataclass(frozen=True, slots=True)
class Recipe:
    """A task and its scripted paths: demonstrations (offline) or one solution (online)."""

    task: Task
    paths: tuple[Path, ...]

    @property
    def id(self) -> str:
        return self.task.id

    @property
    def offline(self) -> bool:
        return self.task.protocol is EvalProtocol.OFFLINE


def _labels(scenario: str, syntax: str, *semantics: str) -> Labels:
    return Labels(scenario=scenario, syntax=(syntax,), semantics=semantics)


def offline(
    task_id: str,
    said: str,
    normalized: str,
    app: str,
    reset: ResetRecipe,
    labels: Labels,
    *paths: Path,
    max_steps: int = 15,
    success: SuccessCriteria | None = None,
    intent: str | None = None,
    clarifications: tuple[str, ...] = (),
    answers: tuple[str, ...] = (),
) -> Recipe:
    """An offline task; with ``success`` it carries online criteria too, so that both
    protocols can score it (``eval --protocol online --tasks ...``). ``intent`` is what the
    person really wants (a simulated user answers from it), ``clarifications`` what they
    reply when asked, ``answers`` what a question about the phone is answered with."""
    task = Task(
        id=task_id,
        instruction=said,
        normalized_instruction=normalized,
        app=app,
        protocol=EvalProtocol.OFFLINE,
        max_steps=max_steps,
        labels=labels,
        reset=reset,
        success=success,
        intent=intent,
        clarifications=clarifications,
        answers=answers,
    )
    return Recipe(task, paths)


def online(
    task_id: str,
    said: str,
    normalized: str,
    app: str,
    labels: Labels,
    success: SuccessCriteria,
    solution: Path,
    *,
    max_steps: int = 15,
    intent: str | None = None,
    answers: tuple[str, ...] = (),
) -> Recipe:
    task = Task(
        id=task_id,
        instruction=said,
        normalized_instruction=normalized,
        app=app,
        protocol=EvalProtocol.ONLINE,
        max_steps=max_steps,
        labels=labels,
        reset=in_app(app, *SYSTEM_DEFAULTS),
        success=success,
        intent=intent,
        answers=answers,
    )
    return Recipe(task, (solution,))


LIFE = "life_service"
SOCIAL = "social_communication"
SYSTEM = "system_settings"
INFO = "information_inquiry"
TOOL = "tool_assistance"

INDIRECT = "indirect_speech"
AMBIGUOUS = "referential_ambiguity"
UNDERSPECIFIED = "under_specification"
CORRECTION = "disfluency_correction"

_TOM_LATE = "Running late, sorry"


def _criteria(
    rubric: str, *must: str, activity: str | None = None, never: tuple[str, ...] = ()
) -> SuccessCriteria:
    return SuccessCriteria(
        activity=activity, must_contain=must, must_not_contain=never, rubric=rubric
    )


# --------------------------------------------------------------------------- shared paths
# Several tasks ask for the same thing in other words (an offline task and its asking or
# answer variant) and share their demonstrations; many paths end the same way (send a
# text, pay an order). Each is written once here.


def _send_sms(text: str) -> Path:
    """In an open conversation: type ``text``, send it, and stop."""
    return (tap("Text message"), type_text(text), tap_desc("Send SMS"), done())


def _find_contact(query: str, name: str) -> Path:
    """Search the contact list for ``query`` and open ``name``."""
    return (tap("Search contacts"), type_text(query), tap(name))


def _checkout(*to_order: Step) -> Path:
    """The ``to_order`` steps that lead to the pharmacy's order page, then order and pay."""
    return (*to_order, tap("Place order"), tap("Pay"), done())


def _buy_now(medicine: str) -> Path:
    return _checkout(tap(medicine), tap("Buy now"))


def _add_to_cart(medicine: str) -> Path:
    return _checkout(tap(medicine), tap("Add to cart"), tap_desc("Cart, 1 item"))


def _search_and_buy(query: str, medicine: str) -> Path:
    return _checkout(tap("Search medicines"), type_text(query), tap(medicine), tap("Buy now"))


_CALL_PATEL: Path = (tap("Dr. Patel (Cardiology)"), tap_desc("Call"), done())

_CALL_TOM_FROM_HOME: tuple[Path, ...] = (
    (tap("Phone"), tap_desc("Call Son (Tom)"), done()),
    (tap("Phone"), tap_desc("Recents"), tap_desc("Call Son (Tom)"), done()),
    (tap("Messages"), tap("Son (Tom)"), tap_desc("Call"), done()),
)
_DR_LEE_MESSAGE_FROM_HOME: tuple[Path, ...] = (
    (tap("Messages"), tap("Dr. Lee"), done()),
    (tap("Contacts"), tap("Dr. Lee"), tap_desc("Text"), done()),
    (open_shade(), tap("Dr. Lee"), done()),
)
_ABOUT_PHONE_IN_SETTINGS: tuple[Path, ...] = (
    (swipe_up(), swipe_up(), tap("About phone"), done()),
    (tap("Search Settings"), type_text("number"), tap("Phone number"), done()),
    (tap("Search Settings"), type_text("about"), tap("About phone"), done()),
)
_LAKEWOOD_IN_WEATHER: tuple[Path, ...] = (
    (tap_desc("Change city"), tap("Lakewood"), done()),
    (tap("Springfield"), tap("Lakewood"), done()),
    (tap_desc("Change city"), tap("Riverside"), tap_desc("Change city"), tap("Lakewood"), done()),
)
_EIGHT_AM_ALARM_IN_CLOCK: tuple[Path, ...] = (
    (tap_desc("Add alarm"), tap_desc("Increase hour"), tap("OK"), done()),
    (tap_desc("Add alarm"), tap_desc("Hour"), type_text("8"), tap("OK"), done()),
    (
        tap_desc("Clock"),
        tap_desc("Alarm"),
        tap_desc("Add alarm"),
        tap_desc("Increase hour"),
        tap("OK"),
        done(),
    ),
)
_REFILL_LISINOPRIL_IN_PHARMACY: tuple[Path, ...] = (
    _checkout(tap_desc("Refill Lisinopril 10 mg"), tap_desc("Cart, 1 item")),
    _add_to_cart("Lisinopril 10 mg"),
    _buy_now("Lisinopril 10 mg"),
)


OFFLINE_RECIPES: tuple[Recipe, ...] = (
    offline(
        "font_bigger",
        "words are too small",
        "In Settings, open Display, then Font size, and tap Make larger.",
        SETTINGS,
        in_app(SETTINGS),
        _labels(SYSTEM, "canonical", INDIRECT),
        (tap("Display"), tap("Font size"), tap_desc("Make larger"), done()),
        (
            swipe_up(),
            tap("Accessibility"),
            tap("Display size and text"),
            tap_desc("Make larger"),
            done(),
        ),
        (
            tap("Search Settings"),
            type_text("font"),
            tap("Font size"),
            tap_desc("Make larger"),
            done(),
        ),
    ),
    offline(
        "screen_brighter",
        "屏幕太暗了",
        "In Settings, open Display, then Brightness level, and turn the brightness up.",
        SETTINGS,
        in_app(SETTINGS),
        _labels(SYSTEM, "canonical", INDIRECT),
        (tap("Display"), tap("Brightness level"), slide("Brightness level", 0.95), done()),
        (
            tap("Search Settings"),
            type_text("bright"),
            tap("Brightness level"),
            slide("Brightness level", 0.95),
            done(),
        ),
        (
            tap("Search Settings"),
            type_text("dim"),
            tap("Brightness level"),
            slide("Brightness level", 0.95),
            done(),
        ),
    ),
    offline(
        "hearing_aid",
        "hearing aid won't work",
        "In Settings, open Connected devices and turn on Bluetooth.",
        SETTINGS,
        in_app(SETTINGS),
        _labels(SYSTEM, "canonical", INDIRECT, UNDERSPECIFIED),
        (tap("Connected devices"), tap("Bluetooth"), done()),
        (
            tap("Search Settings"),
            type_text("bluetooth"),
            tap("Bluetooth"),
            tap("Bluetooth"),
            done(),
        ),
        (
            tap("Search Settings"),
            type_text("connected"),
            tap("Connected devices"),
            tap("Bluetooth"),
            done(),
        ),
    ),
    offline(
        "my_number",
        "my number again?",
        "In Settings, scroll down and open About phone to see the phone number.",
        SETTINGS,
        in_app(SETTINGS),
        _labels(INFO, "elliptical", AMBIGUOUS),
        *_ABOUT_PHONE_IN_SETTINGS,
        success=_criteria(
            "About phone shows the phone number (202) 555-0199.",
            "(202) 555-0199",
            activity=SUBSETTINGS,
        ),
    ),
    offline(
        "call_daughter",
        "call my daughter",
        "Call Daughter (Emma) with the Phone app.",
        DIALER,
        from_home(),
        _labels(SOCIAL, "canonical", AMBIGUOUS),
        (tap("Phone"), tap_desc("Call Daughter (Emma)"), done()),
        (tap("Contacts"), tap("Daughter (Emma)"), tap_desc("Call"), done()),
        (tap("Messages"), tap("Daughter (Emma)"), tap_desc("Call"), done()),
        success=_criteria(
            "A call to Daughter (Emma) is being placed.",
            "Daughter (Emma)",
            "Calling...",
            activity=IN_CALL,
        ),
    ),
    offline(
        "text_tom_late",
        "tell Tom I'm late",
        f'In Messages, send Son (Tom) the message "{_TOM_LATE}".',
        MESSAGES,
        from_home(),
        _labels(SOCIAL, "elliptical", UNDERSPECIFIED),
        (tap("Messages"), tap("Son (Tom)"), *_send_sms(_TOM_LATE)),
        (
            tap("Contacts"),
            *_find_contact("tom", "Son (Tom)"),
            tap_desc("Text"),
            *_send_sms(_TOM_LATE),
        ),
        (
            tap("Messages"),
            tap_desc("Start chat"),
            type_text("tom"),
            tap("Son (Tom)"),
            *_send_sms(_TOM_LATE),
        ),
        success=_criteria(
            f'Tom\'s conversation shows the sent message "{_TOM_LATE}".',
            "Son (Tom)",
            _TOM_LATE,
            "Text message",
            activity=THREAD,
        ),
    ),
    offline(
        "call_doctor_lee",
        "ring Dr. Patel, no, Dr. Lee",
        "Call Dr. Lee with the Phone app.",
        DIALER,
        in_app(DIALER),
        _labels(SOCIAL, "compound", CORRECTION),
        (tap_desc("Call Dr. Lee"), done()),
        (tap_desc("Recents"), tap_desc("Call Dr. Lee"), done()),
        (tap_desc("Contacts"), swipe_up(), tap("Dr. Lee"), tap_desc("Call"), done()),
        success=_criteria(
            "A call to Dr. Lee (not Dr. Patel) is being placed.",
            "Dr. Lee",
            "Calling...",
            activity=IN_CALL,
            never=("Patel",),
        ),
    ),
    offline(
        "say_yes_emma",
        "tell Emma yes",
        'In Messages, reply "Yes" to Daughter (Emma).',
        MESSAGES,
        in_app(MESSAGES),
        _labels(SOCIAL, "elliptical", UNDERSPECIFIED),
        (tap("Daughter (Emma)"), *_send_sms("Yes")),
        (tap_desc("Start chat"), type_text("emma"), tap("Daughter (Emma)"), *_send_sms("Yes")),
        (open_shade(), tap("Daughter (Emma)"), *_send_sms("Yes")),
    ),
    offline(
        "call_tom_back",
        "汤姆让我回个电话",
        "Call Son (Tom) back with the Phone app.",
        DIALER,
        from_home(),
        _labels(SOCIAL, "narrative", INDIRECT),
        *_CALL_TOM_FROM_HOME,
        success=_criteria(
            "A call to Son (Tom) is being placed.",
            "Son (Tom)",
            "Calling...",
            activity=IN_CALL,
        ),
    ),
    offline(
        "doctor_when",
        "when's the doctor?",
        "In Messages, open the message from Dr. Lee to see the appointment time.",
        MESSAGES,
        from_home(),
        _labels(INFO, "elliptical", AMBIGUOUS),
        *_DR_LEE_MESSAGE_FROM_HOME,
        success=_criteria(
            "Dr. Lee's message with the appointment time (Tuesday at 10 AM) is on the screen.",
            "Tuesday at 10 AM",
            activity=THREAD,
        ),
    ),
    offline(
        "rita_number",
        "Rita's number?",
        "In Contacts, open Neighbor (Rita) to see the phone number.",
        CONTACTS,
        from_home(),
        _labels(INFO, "elliptical", UNDERSPECIFIED),
        (tap("Contacts"), *_find_contact("rita", "Neighbor (Rita)"), done()),
        (tap("Contacts"), swipe_up(), swipe_up(), swipe_up(), tap("Neighbor (Rita)"), done()),
        (
            tap("Phone"),
            tap_desc("Contacts"),
            swipe_up(),
            swipe_up(),
            swipe_up(),
            tap("Neighbor (Rita)"),
            done(),
        ),
        success=_criteria(
            "Neighbor (Rita)'s contact card shows her number (202) 555-0117.",
            "Neighbor (Rita)",
            "(202) 555-0117",
            activity=CONTACT_CARD,
        ),
    ),
    offline(
        "rain_tomorrow",
        "rain tomorrow?",
        "In Weather, open Tomorrow to see the chance of rain.",
        WEATHER,
        from_home(),
        _labels(INFO, "elliptical", UNDERSPECIFIED),
        (tap("Weather"), tap("Tomorrow"), done()),
        (swipe_up(), tap("Weather"), tap("Tomorrow"), done()),
        (tap("Weather"), swipe_up(), tap("Tomorrow"), done()),
        success=_criteria(
            "Weather shows tomorrow's forecast with the chance of rain.",
            "Tomorrow",
            "Chance of rain",
            activity=WEATHER_DAY,
        ),
    ),
    offline(
        "lakewood_weather",
        "cold in Lakewood?",
        "In Weather, tap Change city and choose Lakewood.",
        WEATHER,
        in_app(WEATHER),
        _labels(INFO, "elliptical", INDIRECT),
        *_LAKEWOOD_IN_WEATHER,
        success=_criteria(
            "Weather shows the forecast for Lakewood.",
            "Lakewood",
            activity=WEATHER_TODAY,
            never=("Springfield",),
        ),
    ),
    offline(
        "london_time",
        "time in London now?",
        "In Clock, open the Clock tab to see the time in London.",
        CLOCK,
        from_home(),
        _labels(TOOL, "elliptical", UNDERSPECIFIED),
        (tap("Clock"), tap_desc("Clock"), done()),
        (swipe_up(), tap("Clock"), tap_desc("Clock"), done()),
        (tap("Clock"), tap_desc("Add alarm"), back(), tap_desc("Clock"), done()),
        success=_criteria(
            "The Clock tab shows the time in London.",
            "London",
            activity=ALARMS,
        ),
    ),
    offline(
        "sleep_in",
        "I can sleep in",
        "In Clock, turn off the 6:30 AM alarm.",
        CLOCK,
        from_home(),
        _labels(TOOL, "narrative", INDIRECT, AMBIGUOUS),
        (tap("Clock"), tap_desc("6:30 AM alarm"), done()),
        (swipe_up(), tap("Clock"), tap_desc("6:30 AM alarm"), done()),
        (tap("Clock"), tap_desc("Clock"), tap_desc("Alarm"), tap_desc("6:30 AM alarm"), done()),
    ),
    offline(
        "wake_at_eight",
        "wake me at eight",
        "In Clock, add an alarm for 8:00 AM.",
        CLOCK,
        in_app(CLOCK),
        _labels(TOOL, "elliptical", UNDERSPECIFIED),
        *_EIGHT_AM_ALARM_IN_CLOCK,
    ),
    offline(
        "bp_pills_out",
        "my blood pressure pills are almost gone",
        "In CarePlus Pharmacy, refill Lisinopril 10 mg and place the order.",
        PHARMACY,
        in_app(PHARMACY),
        _labels(LIFE, "narrative", INDIRECT),
        *_REFILL_LISINOPRIL_IN_PHARMACY,
        success=_criteria(
            "An order for Lisinopril 10 mg is placed and listed under Orders.",
            "Lisinopril 10 mg x1",
            activity=ORDERS,
        ),
    ),
    offline(
        "vitamins_again",
        "same vitamins again",
        "In CarePlus Pharmacy, order Vitamin D3 1000 IU.",
        PHARMACY,
        in_app(PHARMACY),
        _labels(LIFE, "elliptical", AMBIGUOUS),
        _buy_now("Vitamin D3 1000 IU"),
        _add_to_cart("Vitamin D3 1000 IU"),
        _search_and_buy("vitamin", "Vitamin D3 1000 IU"),
        success=_criteria(
            "An order for Vitamin D3 1000 IU is placed and listed under Orders.",
            "Vitamin D3 1000 IU x1",
            activity=ORDERS,
        ),
    ),
)


ONLINE_RECIPES: tuple[Recipe, ...] = (
    online(
        "airplane_on",
        "flying tomorrow",
        "Turn on Airplane mode in Settings.",
        SETTINGS,
        _labels(SYSTEM, "elliptical", INDIRECT),
        # The status bar says "Airplane mode." only while it is on, on every screen.
        _criteria("Airplane mode is on: the status bar shows the airplane icon.", "Airplane mode."),
        (tap("Network & internet"), tap("Airplane mode"), done()),
    ),
    online(
        "wifi_off",
        "turn that wifi off",
        "Turn off Wi-Fi in Settings.",
        SETTINGS,
        _labels(SYSTEM, "canonical", AMBIGUOUS),
        _criteria(
            "Wi-Fi is off: the status bar no longer shows the Wi-Fi signal.",
            never=("Wifi signal full.",),
        ),
        (tap("Network & internet"), tap("Internet"), tap("Wi-Fi"), done()),
    ),
    online(
        "letters_biggest",
        "letters as big as they go",
        "In Settings, open Display, then Font size, and tap Make larger until it says Maximum.",
        SETTINGS,
        _labels(SYSTEM, "elliptical", UNDERSPECIFIED),
        _criteria(
            "The font size is set to its largest step (Maximum).",
            "Maximum",
            activity=SETTINGS,
        ),
        (tap("Display"), tap("Font size"), *[tap_desc("Make larger")] * 5, done()),
    ),
    online(
        "thank_rita",
        "thank Rita for the flowers, no, the cookies",
        'In Messages, send Neighbor (Rita) the message "Thank you for the cookies".',
        MESSAGES,
        _labels(SOCIAL, "compound", CORRECTION),
        # An empty compose box shows its hint: the message was sent, not just typed.
        _criteria(
            "Rita's conversation shows a sent thanks for the cookies (not the flowers).",
            "Neighbor (Rita)",
            "Thank you for the cookies",
            "Text message",
            activity=THREAD,
            never=("flowers",),
        ),
        (tap("Neighbor (Rita)"), *_send_sms("Thank you for the cookies")),
    ),
    online(
        "pie_for_emma",
        "tell Em I'll bring pie",
        'In Messages, send Daughter (Emma) the message "I will bring pie on Sunday".',
        MESSAGES,
        _labels(SOCIAL, "elliptical", AMBIGUOUS),
        _criteria(
            "Emma's conversation shows a sent message saying a pie will be brought.",
            "Daughter (Emma)",
            "pie",
            "Text message",
            activity=THREAD,
        ),
        (tap("Daughter (Emma)"), *_send_sms("I will bring pie on Sunday")),
    ),
    online(
        "phone_tom",
        "phone Tom",
        "Call Son (Tom) with the Phone app.",
        DIALER,
        _labels(SOCIAL, "elliptical", AMBIGUOUS),
        _criteria("A call to Son (Tom) is in progress.", "Son (Tom)", activity=IN_CALL),
        (tap_desc("Call Son (Tom)"), done()),
    ),
    online(
        "heart_doctor",
        "call heart doctor",
        "In Contacts, call Dr. Patel (Cardiology).",
        CONTACTS,
        _labels(SOCIAL, "elliptical", AMBIGUOUS),
        _criteria(
            "A call to Dr. Patel (Cardiology) is in progress.",
            "Dr. Patel (Cardiology)",
            activity=IN_CALL,
        ),
        _CALL_PATEL,
    ),
    online(
        "rita_favorite",
        "keep Rita handy",
        "In Contacts, add Neighbor (Rita) to favorites.",
        CONTACTS,
        _labels(SOCIAL, "canonical", INDIRECT, AMBIGUOUS),
        _criteria(
            "Neighbor (Rita) is starred: her contact card offers to remove her from favorites.",
            "Neighbor (Rita)",
            "Remove from favorites",
            activity=CONTACT_CARD,
        ),
        (*_find_contact("rita", "Neighbor (Rita)"), tap_desc("Add to favorites"), done()),
    ),
    online(
        "tom_number",
        "Tom's number?",
        "In Contacts, open Son (Tom) to see his phone number.",
        CONTACTS,
        _labels(INFO, "elliptical", AMBIGUOUS),
        _criteria(
            "Son (Tom)'s contact card with his number is open.",
            "Son (Tom)",
            "(202) 555-0121",
            activity=CONTACT_CARD,
        ),
        (*_find_contact("tom", "Son (Tom)"), done()),
    ),
    online(
        "taxi_home",
        "帮我叫个车",
        "Call Taxi Service with the Phone app.",
        DIALER,
        _labels(LIFE, "elliptical", UNDERSPECIFIED, INDIRECT),
        _criteria("A call to Taxi Service is in progress.", "Taxi Service", activity=IN_CALL),
        (
            tap_desc("Contacts"),
            swipe_up(),
            swipe_up(),
            swipe_up(),
            swipe_up(),
            tap("Taxi Service"),
            tap_desc("Call"),
            done(),
        ),
    ),
    online(
        "wake_half_seven",
        "明早七点半叫我",
        "In Clock, add an alarm for 7:30 AM.",
        CLOCK,
        _labels(TOOL, "elliptical", UNDERSPECIFIED),
        _criteria("The alarm list shows an alarm at 7:30 AM.", "7:30 AM", activity=ALARMS),
        (tap_desc("Add alarm"), tap_desc("Minute"), type_text("30"), tap("OK"), done()),
    ),
    online(
        "no_morning_pills",
        "I stopped the morning pills",
        "In Clock, delete the 8:00 AM Take pills alarm.",
        CLOCK,
        _labels(TOOL, "narrative", INDIRECT, AMBIGUOUS),
        _criteria(
            "The Take pills alarm is gone from the alarm list; the Evening pills alarm stays.",
            "Evening pills",
            activity=ALARMS,
            never=("Take pills",),
        ),
        (tap_desc("Delete", nth=1), done()),
    ),
    online(
        "fahrenheit",
        "Celsius confuses me",
        "In Weather settings, turn on Use Fahrenheit.",
        WEATHER,
        _labels(TOOL, "canonical", INDIRECT),
        _criteria(
            "Weather's settings show temperatures in Fahrenheit.",
            "Temperatures in °F",
            activity=WEATHER_SETTINGS,
        ),
        (tap_desc("Settings"), tap("Use Fahrenheit (°F)"), done()),
    ),
    online(
        "riverside_weather",
        "Riverside weather?",
        "In Weather, tap Change city and choose Riverside.",
        WEATHER,
        _labels(INFO, "elliptical", UNDERSPECIFIED),
        _criteria(
            "Weather shows today's forecast for Riverside.", "Riverside", activity=WEATHER_TODAY
        ),
        (tap_desc("Change city"), tap("Riverside"), done()),
    ),
    online(
        "knee_hurts",
        "my knee hurts, get me something",
        "In CarePlus Pharmacy, order Acetaminophen 500 mg.",
        PHARMACY,
        _labels(LIFE, "compound", INDIRECT, UNDERSPECIFIED),
        _criteria(
            "An order for Acetaminophen 500 mg was placed.",
            "Acetaminophen 500 mg x",
            activity=ORDERS,
        ),
        _buy_now("Acetaminophen 500 mg"),
    ),
    online(
        "fetch_metformin",
        "I'll fetch the sugar pills myself",
        "In CarePlus Pharmacy, refill Metformin 500 mg, choose Store pickup and place the order.",
        PHARMACY,
        _labels(LIFE, "narrative", INDIRECT, AMBIGUOUS),
        _criteria(
            "An order for Metformin 500 mg was placed for store pickup.",
            "Metformin 500 mg x",
            "Store pickup",
            activity=ORDERS,
        ),
        _checkout(
            tap_desc("Refill Metformin 500 mg"),
            tap_desc("Cart, 1 item"),
            tap("Store pickup (free)"),
        ),
    ),
    online(
        "dry_eyes",
        "my eyes are so dry",
        "In CarePlus Pharmacy, order Lubricant eye drops.",
        PHARMACY,
        _labels(LIFE, "canonical", INDIRECT),
        _criteria(
            "An order for Lubricant eye drops was placed.", "Lubricant eye drops x", activity=ORDERS
        ),
        _search_and_buy("eye", "Lubricant eye drops"),
    ),
)

# Tasks that cannot be done right without asking: the phone holds two of what the person
# names (two children, two doctors, two prescriptions, several cities, any alarm time).
# Their scripted clarifications say which; their intent lets a simulated user say it.
ASKING_RECIPES: tuple[Recipe, ...] = (
    offline(
        "refill_my_pills",
        "refill my pills",
        "In CarePlus Pharmacy, refill Lisinopril 10 mg and place the order.",
        PHARMACY,
        in_app(PHARMACY),
        _labels(LIFE, "elliptical", AMBIGUOUS),
        *_REFILL_LISINOPRIL_IN_PHARMACY,
        intent="Refill my blood pressure pills, the Lisinopril; the Metformin still lasts.",
        clarifications=("The blood pressure ones.",),
    ),
    offline(
        "call_my_child",
        "give my child a ring",
        "Call Son (Tom) with the Phone app.",
        DIALER,
        from_home(),
        _labels(SOCIAL, "canonical", AMBIGUOUS),
        *_CALL_TOM_FROM_HOME,
        intent="Call my son Tom, not my daughter Emma.",
        clarifications=("My boy, Tom.",),
    ),
    offline(
        "call_the_doctor",
        "call the doctor for me",
        "In Contacts, call Dr. Patel (Cardiology).",
        CONTACTS,
        in_app(CONTACTS),
        _labels(SOCIAL, "canonical", AMBIGUOUS),
        _CALL_PATEL,
        (tap("Search contacts"), type_text("patel"), *_CALL_PATEL),
        (tap("Search contacts"), type_text("dr"), *_CALL_PATEL),
        intent="Call my heart doctor, Dr. Patel, not Dr. Lee.",
        clarifications=("The heart doctor.",),
    ),
    offline(
        "weather_at_sister",
        "is it cold where my sister is?",
        "In Weather, tap Change city and choose Lakewood.",
        WEATHER,
        in_app(WEATHER),
        _labels(INFO, "narrative", UNDERSPECIFIED),
        *_LAKEWOOD_IN_WEATHER,
        intent="See the weather in Lakewood, where my sister lives.",
        clarifications=("She lives in Lakewood.",),
    ),
    offline(
        "set_an_alarm",
        "set an alarm for tomorrow",
        "In Clock, add an alarm for 8:00 AM.",
        CLOCK,
        in_app(CLOCK),
        _labels(TOOL, "canonical", UNDERSPECIFIED),
        *_EIGHT_AM_ALARM_IN_CLOCK,
        intent="An alarm at eight in the morning.",
        clarifications=("Eight o'clock, in the morning.",),
    ),
)

# Questions about the phone: the task ends in an answer, checked against ``answers`` (one
# of them online, on the phone).
ANSWER_RECIPES: tuple[Recipe, ...] = (
    offline(
        "doctor_day",
        "what day do I see the doctor?",
        "In Messages, open Dr. Lee's message and say when the appointment is.",
        MESSAGES,
        from_home(),
        _labels(INFO, "canonical"),
        *_DR_LEE_MESSAGE_FROM_HOME,
        intent="Know the day and time of my appointment with Dr. Lee.",
        answers=("Tuesday",),
    ),
    online(
        "whats_rita_number",
        "what's Rita's number, I need to write it down",
        "In Contacts, open Neighbor (Rita) and say her phone number.",
        CONTACTS,
        _labels(INFO, "compound"),
        _criteria(
            "Neighbor (Rita)'s contact card shows her number (202) 555-0117.",
            "Neighbor (Rita)",
            "(202) 555-0117",
            activity=CONTACT_CARD,
        ),
        (*_find_contact("rita", "Neighbor (Rita)"), done()),
        intent="Hear my neighbour Rita's phone number so I can write it down.",
        answers=("555-0117",),
    ),
    offline(
        "my_phone_number",
        "what is my own phone number?",
        "In Settings, open About phone and say the phone number.",
        SETTINGS,
        in_app(SETTINGS),
        _labels(INFO, "canonical"),
        *_ABOUT_PHONE_IN_SETTINGS,
        intent="Hear the number of this phone.",
        answers=("555-0199",),
    ),
)

RECIPES: tuple[Recipe, ...] = tuple(
    sorted(OFFLINE_RECIPES + ASKING_RECIPES + ANSWER_RECIPES + ONLINE_RECIPES, key=lambda r: r.id)
)


def recipe(task_id: str) -> Recipe:
    for r in RECIPES:
        if r.id == task_id:
            return r
    raise KeyError(f"no sample task {task_id!r}; known: {', '.join(r.id for r in RECIPES)}")
