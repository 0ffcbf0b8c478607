"""The reset recipe in task.json: snapshot, settings, packages to clear, start activity."""

from __future__ import annotations

import pytest

from graph_builder.errors import FormatError, RecordError
from graph_builder.model import ResetRecipe, SettingValue

OLD = {
    "package": "com.android.settings",
    "activity": None,
    "go_home": True,
    "force_stop": True,
    "clear_data": False,
    "settings": [{"namespace": "system", "key": "font_scale", "value": "1.0"}],
}


def test_a_recipe_round_trips_and_old_recipes_keep_their_bytes() -> None:
    old = ResetRecipe.from_json(OLD)
    assert old.to_json() == OLD  # nothing new is written for a recipe that does not use it
    full = ResetRecipe(
        "",
        activity="com.android.settings/.DisplaySettings",
        settings=(SettingValue.parse("secure ui_night_mode 1"),),
        clear_packages=("com.android.deskclock",),
        snapshot="clean-start",
    )
    data = full.to_json()
    assert data["snapshot"] == "clean-start"
    assert data["clear_packages"] == ["com.android.deskclock"]
    assert ResetRecipe.from_json(data) == full
    assert ResetRecipe.from_json({"settings": []}).is_empty  # package may be left out
    assert not ResetRecipe("", settings=full.settings).is_empty


def test_bad_recipe_parts_are_named() -> None:
    with pytest.raises(FormatError, match="snapshot name"):
        ResetRecipe.from_json({**OLD, "snapshot": "no spaces please"})
    with pytest.raises(RecordError, match="NAMESPACE KEY VALUE"):
        SettingValue.parse("font_scale 1.0")
    assert SettingValue.parse("global device_name My phone").value == "My phone"
    assert ResetRecipe("ok.app", clear_packages=("evil; reboot",)).bad_packages() == [
        "evil; reboot"
    ]
