"""The form that configures an evaluation run and builds the evaluator's ``RunConfig``.

Suite and task filter (label, app, protocol), agent and its settings (model family with
its default prompt, endpoint, model, the *name* of the API-key variable, prompt, extra
JSON), the protocol to run under, the instruction variant, the matching profile, devices
for online runs, the executor (local threads or Ray, with its address), trials, the
judges and their settings (typed, or a file as ``--judge-config``), the simulated user's
endpoint file (``--user-simulator``) and the output folder. It offers what
``elderbench eval`` offers, checks it the same way and makes the same run.json.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from evaluator.agents import AGENTS
from evaluator.agents.families import FAMILIES
from evaluator.cli import read_config
from evaluator.errors import ConfigError
from evaluator.farm.executors import EXECUTORS
from evaluator.farm.pool import FarmSettings
from evaluator.judges import JUDGES
from evaluator.matching import PROFILES
from evaluator.prompts import load_prompt
from evaluator.runner import RunConfig
from graph_builder.errors import GraphBuilderError
from graph_builder.io import load_task, suite_task_dirs
from graph_builder.model import EvalProtocol, InstructionVariant, Task
from recorder_app.errors import SettingsError
from recorder_app.qt.eval_panel.settings import (
    AgentSettings,
    EvalSettings,
    judge_config,
    new_run_folder,
    suite_choices,
)
from recorder_app.qt.workers import run_in_background

if TYPE_CHECKING:
    from devices.android import DeviceSummary

ANY = ""
SERIAL_ROLE = Qt.ItemDataRole.UserRole


def task_matches(task: Task, label: str, app: str, protocol: str) -> bool:
    """``label`` is ``"dimension=value"``; empty filters match every task."""
    if label and label not in {f"{d}={v}" for d, v in task.labels.items()}:
        return False
    if app and task.app != app:
        return False
    return not protocol or task.protocol.value == protocol


def _combo(items: list[tuple[str, str]], name: str) -> QComboBox:
    combo = QComboBox()
    combo.setObjectName(name)
    _compact(combo)
    for text, data in items:
        combo.addItem(text, data)
    return combo


def _form(box: QGroupBox) -> QFormLayout:
    form = QFormLayout(box)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    return form


def _compact(combo: QComboBox) -> None:
    """Long suite paths and labels must not widen the form; the popup shows them whole."""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(12)


def _file_row(edit: QLineEdit, title: str) -> QHBoxLayout:
    """A path field with a button that picks a JSON or TOML file into it."""
    browse = QToolButton()
    browse.setText("…")
    browse.setToolTip(title)

    def pick() -> None:
        path, _ = QFileDialog.getOpenFileName(
            edit, title, edit.text() or str(Path.home()), "Settings (*.json *.toml)"
        )
        if path:
            edit.setText(path)

    browse.clicked.connect(pick)
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(browse)
    return row


def _settings_file(text: str, option: str) -> dict[str, Any]:
    """The settings in the file named ``text`` (read as ``elderbench eval`` reads its
    option's file; {} when blank)."""
    if not text.strip():
        return {}
    try:
        return read_config(Path(text.strip()))
    except ConfigError as exc:
        raise SettingsError(f"{option}: {exc}") from exc


def _select(combo: QComboBox, data: str) -> None:
    index = combo.findData(data)
    combo.setCurrentIndex(max(0, index))


class RunConfigForm(QWidget):
    problem_occurred = Signal(str)
    tasks_changed = Signal(int, int)  # selected, in suite

    def __init__(
        self,
        list_devices: Callable[[], list[DeviceSummary]] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("runConfigForm")
        self._list_devices = list_devices
        self._suites_dir: Path | None = None
        self._runs_dir: Path | None = None
        self._tasks: list[Task] = []
        self._agent_settings: dict[str, AgentSettings] = {}
        self._agent = ""
        self._custom_categories: tuple[str, ...] = ()
        self._listed: tuple[tuple[str, str, str, str], ...] | None = None  # shown devices
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._build_suite_box())
        layout.addWidget(self._build_agent_box())
        layout.addWidget(self._build_run_box())
        layout.addStretch(1)

    # -- construction

    def _build_suite_box(self) -> QGroupBox:
        box = QGroupBox("Tasks")
        self.suite_combo = QComboBox()
        self.suite_combo.setObjectName("suiteCombo")
        _compact(self.suite_combo)
        self.suite_combo.currentIndexChanged.connect(self._on_suite_changed)
        browse = QToolButton()
        browse.setText("…")
        browse.setToolTip("Choose a suite folder")
        browse.clicked.connect(self._on_browse_suite_clicked)
        suite_row = QHBoxLayout()
        suite_row.addWidget(self.suite_combo, 1)
        suite_row.addWidget(browse)
        self.label_filter = _combo([("any label", ANY)], "labelFilter")
        self.app_filter = _combo([("any app", ANY)], "appFilter")
        self.protocol_filter = _combo(
            [("any protocol", ANY), ("offline", "offline"), ("online", "online")],
            "protocolFilter",
        )
        for combo in (self.label_filter, self.app_filter, self.protocol_filter):
            combo.currentIndexChanged.connect(self._on_filter_changed)
        self.task_count = QLabel("")
        self.task_count.setObjectName("taskCount")
        form = _form(box)
        form.addRow("Suite", suite_row)
        form.addRow("Label", self.label_filter)
        form.addRow("App", self.app_filter)
        form.addRow("Protocol", self.protocol_filter)
        form.addRow("", self.task_count)
        return box

    def _build_agent_box(self) -> QGroupBox:
        box = QGroupBox("Agent")
        self.agent_combo = _combo([(name, name) for name in sorted(AGENTS)], "agentCombo")
        self.agent_combo.currentIndexChanged.connect(self._on_agent_changed)
        self.family_combo = _combo(
            [("the agent's own", ANY), *((name, name) for name in sorted(FAMILIES))],
            "familyCombo",
        )
        self.family_combo.setToolTip(
            "The model family whose reply grammar, coordinates and prompt the agent uses "
            "(docs/agents.md)"
        )
        self.family_combo.currentIndexChanged.connect(self._on_family_changed)
        self.family_prompt = QLabel("")
        self.family_prompt.setObjectName("familyPrompt")
        self.family_prompt.setWordWrap(True)
        self.endpoint_edit = QLineEdit()
        self.endpoint_edit.setPlaceholderText("http://127.0.0.1:8000/v1 (VLM agents)")
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("model name")
        self.key_env_edit = QLineEdit()
        self.key_env_edit.setObjectName("keyEnvEdit")
        self.key_env_edit.setPlaceholderText("e.g. OPENAI_API_KEY (its name, not the key)")
        self.key_env_edit.setToolTip(
            "The name of the environment variable that holds the API key. The key itself "
            "is never typed here or saved."
        )
        self.prompt_edit = QLineEdit()
        self.prompt_edit.setPlaceholderText("prompt template (default: the agent's)")
        self.extra_edit = QLineEdit()
        self.extra_edit.setObjectName("extraEdit")
        self.extra_edit.setPlaceholderText('more settings as JSON, e.g. {"seed": 3}')
        self.demos_edit = QLineEdit()
        self.demos_edit.setPlaceholderText(
            "demonstrations (replay; blank: the suite's demos/, else walk the graph)"
        )
        form = _form(box)
        form.addRow("Agent", self.agent_combo)
        form.addRow("Family", self.family_combo)
        form.addRow("", self.family_prompt)
        form.addRow("Endpoint", self.endpoint_edit)
        form.addRow("Model", self.model_edit)
        form.addRow("API key variable", self.key_env_edit)
        form.addRow("Prompt", self.prompt_edit)
        form.addRow("Extra", self.extra_edit)
        form.addRow("Demos", self.demos_edit)
        return box

    def _build_run_box(self) -> QGroupBox:
        box = QGroupBox("Run")
        self.run_protocol = _combo(
            [("each task's own", ANY), ("offline (task graphs)", "offline"), ("online", "online")],
            "runProtocol",
        )
        self.variant_combo = _combo(
            [(v.value, v.value) for v in InstructionVariant], "variantCombo"
        )
        self.mode_combo = _combo(
            [("strict (fail at first mismatch)", "strict"), ("tolerant", "tolerant")],
            "modeCombo",
        )
        self.matching_combo = _combo([(name, name) for name in PROFILES], "matchingCombo")
        self.matching_combo.setToolTip("Tap tolerance convention (docs/evaluation.md)")
        self.workers_spin = QSpinBox()
        self.workers_spin.setRange(1, 32)
        self.workers_spin.setToolTip("Parallel offline workers (online: one per device)")
        self.trials_spin = QSpinBox()
        self.trials_spin.setObjectName("trialsSpin")
        self.trials_spin.setRange(1, 100)
        self.trials_spin.setToolTip(
            "Run every task K times (OUT/trial-01..): mean SR, pass@k, pass^k, flips"
        )
        self.executor_combo = _combo([(name, name) for name in EXECUTORS], "executorCombo")
        for i, entry in enumerate(EXECUTORS.values()):
            self.executor_combo.setItemData(i, entry.description, Qt.ItemDataRole.ToolTipRole)
        self.executor_combo.currentIndexChanged.connect(self._on_executor_changed)
        self.ray_address_edit = QLineEdit()
        self.ray_address_edit.setObjectName("rayAddressEdit")
        self.ray_address_edit.setPlaceholderText("Ray cluster address (auto, ray://head:10001)")
        self.device_list = QListWidget()
        self.device_list.setObjectName("deviceList")
        self.device_list.setMaximumHeight(60)
        self.device_list.setToolTip("Check one or more devices; online tasks are shared out")
        self.refresh_devices_button = QPushButton("Refresh devices")
        self.refresh_devices_button.clicked.connect(self.refresh_devices)
        self.out_edit = QLineEdit()
        self.out_edit.setObjectName("outEdit")
        self.out_edit.setPlaceholderText("new folder: runs/<time>-<agent>-<instruction>")
        browse = QToolButton()
        browse.setText("…")
        browse.clicked.connect(self._on_browse_out_clicked)
        out_row = QHBoxLayout()
        out_row.addWidget(self.out_edit, 1)
        out_row.addWidget(browse)
        self.run_protocol.currentIndexChanged.connect(self._on_filter_changed)
        form = _form(box)
        form.addRow("Run as", self.run_protocol)
        form.addRow("Instruction", self.variant_combo)
        form.addRow("Offline mode", self.mode_combo)
        form.addRow("Matching", self.matching_combo)
        form.addRow("Workers", self.workers_spin)
        form.addRow("Trials", self.trials_spin)
        form.addRow("Executor", self.executor_combo)
        form.addRow("Ray address", self.ray_address_edit)
        form.addRow("Devices", self.device_list)
        form.addRow("", self.refresh_devices_button)
        self.judge_boxes: dict[str, QCheckBox] = {}
        judges_row = QHBoxLayout()
        for name in sorted(JUDGES):
            check = QCheckBox(name)
            check.setObjectName(f"judge_{name}")
            self.judge_boxes[name] = check
            judges_row.addWidget(check)
        judges_row.addStretch(1)
        self.judge_config_edit = QLineEdit()
        self.judge_config_edit.setObjectName("judgeConfigEdit")
        self.judge_config_edit.setPlaceholderText('{"vlm": {"base_url": …, "model": …}}')
        self.judge_config_edit.setToolTip(
            "Settings per judge as JSON; keys only by variable name (api_key_env)"
        )
        self.judge_file_edit = QLineEdit()
        self.judge_file_edit.setObjectName("judgeFileEdit")
        self.judge_file_edit.setPlaceholderText("or a judge settings file (JSON or TOML)")
        self.user_simulator_edit = QLineEdit()
        self.user_simulator_edit.setObjectName("userSimulatorEdit")
        self.user_simulator_edit.setPlaceholderText(
            "simulated user's endpoint file (blank: the tasks' scripted replies)"
        )
        self.user_simulator_edit.setToolTip(
            "When the agent asks, a model plays the older adult from the task's hidden "
            "intent: base_url, model, api_key_env (the variable's name), optional persona"
        )
        form.addRow("Judges (online)", judges_row)
        form.addRow("Judge settings", self.judge_config_edit)
        form.addRow("Judge file", _file_row(self.judge_file_edit, "Choose a judge settings file"))
        form.addRow(
            "User simulator",
            _file_row(self.user_simulator_edit, "Choose the simulated user's endpoint file"),
        )
        form.addRow("Output", out_row)
        self._on_executor_changed()
        return box

    # -- settings

    def set_workspace(self, suites_dir: Path | None, runs_dir: Path | None) -> None:
        self._suites_dir, self._runs_dir = suites_dir, runs_dir
        self.suite_combo.blockSignals(True)
        self.suite_combo.clear()
        for path in suite_choices(suites_dir):
            self._add_suite(path)
        self.suite_combo.blockSignals(False)
        self._on_suite_changed()

    def refresh_suites(self) -> None:
        """Offer suites created since, and reload the chosen one's tasks."""
        current = self.suite_combo.currentData()
        self.suite_combo.blockSignals(True)
        for path in suite_choices(self._suites_dir):
            self._add_suite(path)
        if current:
            self.suite_combo.setCurrentIndex(self.suite_combo.findData(current))
        self.suite_combo.blockSignals(False)
        self._on_suite_changed()

    def apply_settings(self, settings: EvalSettings) -> None:
        if settings.suite:
            self._add_suite(Path(settings.suite))
            self.suite_combo.setCurrentIndex(self.suite_combo.findData(settings.suite))
        _select(self.label_filter, settings.label_filter)
        _select(self.app_filter, settings.app_filter)
        _select(self.protocol_filter, settings.protocol_filter)
        self._agent_settings = dict(settings.agents)
        self._agent = ""
        _select(self.agent_combo, settings.agent)
        self._on_agent_changed()
        self.demos_edit.setText(settings.demos)
        _select(self.run_protocol, settings.run_protocol)
        _select(self.variant_combo, settings.variant)
        _select(self.mode_combo, settings.mode)
        _select(self.matching_combo, settings.matching)
        self.workers_spin.setValue(settings.workers)
        self.trials_spin.setValue(settings.trials)
        _select(self.executor_combo, settings.executor)
        self.ray_address_edit.setText(settings.ray_address)
        self.device_list.clear()
        for serial in settings.devices:
            item = QListWidgetItem(f"{serial} (remembered; Refresh to check it is there)")
            item.setData(SERIAL_ROLE, serial)
            item.setCheckState(Qt.CheckState.Checked)
            self.device_list.addItem(item)
        for name, check in self.judge_boxes.items():
            check.setChecked(name in settings.judges)
        self.judge_config_edit.setText(settings.judge_config)
        self.judge_file_edit.setText(settings.judge_file)
        self.user_simulator_edit.setText(settings.user_simulator)
        self.out_edit.setText(settings.out)
        self._custom_categories = settings.custom_categories

    def settings(self) -> EvalSettings:
        self._store_agent_fields()
        return EvalSettings(
            suite=str(self.suite_combo.currentData() or ""),
            label_filter=str(self.label_filter.currentData() or ""),
            app_filter=str(self.app_filter.currentData() or ""),
            protocol_filter=str(self.protocol_filter.currentData() or ""),
            agent=self.agent_combo.currentData(),
            agents=dict(self._agent_settings),
            demos=self.demos_edit.text().strip(),
            run_protocol=str(self.run_protocol.currentData() or ""),
            variant=self.variant_combo.currentData(),
            mode=self.mode_combo.currentData(),
            workers=self.workers_spin.value(),
            devices=self.devices(),
            judges=self.judges(),
            judge_config=self.judge_config_edit.text().strip(),
            judge_file=self.judge_file_edit.text().strip(),
            matching=str(self.matching_combo.currentData()),
            executor=str(self.executor_combo.currentData()),
            ray_address=self.ray_address_edit.text().strip(),
            trials=self.trials_spin.value(),
            user_simulator=self.user_simulator_edit.text().strip(),
            out=self.out_edit.text().strip(),
            custom_categories=self._custom_categories,
        )

    def set_custom_categories(self, labels: tuple[str, ...]) -> None:
        self._custom_categories = labels

    # -- building the run

    def selected_tasks(self) -> list[Task]:
        """The tasks the filters select; "Run as" offline or online keeps only the tasks
        declared with that protocol, as ``--protocol`` does on the command line."""
        label = str(self.label_filter.currentData() or "")
        app = str(self.app_filter.currentData() or "")
        protocol = str(self.protocol_filter.currentData() or "")
        run_as = str(self.run_protocol.currentData() or "")
        return [
            t
            for t in self._tasks
            if task_matches(t, label, app, protocol) and (not run_as or t.protocol.value == run_as)
        ]

    def filtering(self) -> bool:
        return any(
            combo.currentData()
            for combo in (self.label_filter, self.app_filter, self.protocol_filter)
        )

    def judges(self) -> tuple[str, ...]:
        return tuple(name for name, check in self.judge_boxes.items() if check.isChecked())

    def devices(self) -> tuple[str, ...]:
        """The checked devices (remembered ones are listed checked until a refresh)."""
        return tuple(
            str(self.device_list.item(i).data(SERIAL_ROLE))
            for i in range(self.device_list.count())
            if self.device_list.item(i).checkState() == Qt.CheckState.Checked
        )

    def build_config(self, out: Path | None = None) -> RunConfig:
        """The run these settings describe; SettingsError/ConfigError say what is wrong."""
        suite = self.suite_combo.currentData()
        if not suite or not Path(suite).is_dir():
            raise SettingsError("choose a suite folder (one with suite.json and task folders)")
        if not suite_task_dirs(Path(suite)):
            raise SettingsError(
                f"the suite {Path(suite).name} has no tasks yet; choose another suite or add "
                "tasks to it (Record tab)"
            )
        agent = str(self.agent_combo.currentData())
        self._store_agent_fields()
        agent_config = self._agent_settings.get(agent, AgentSettings()).agent_config()
        run_protocol = str(self.run_protocol.currentData() or "")
        tasks: tuple[str, ...] = ()
        if self.filtering() or run_protocol:
            tasks = tuple(t.id for t in self.selected_tasks())
            if not tasks:
                raise SettingsError("no task of the suite matches the filter; widen it")
        online = [
            t
            for t in (self.selected_tasks() if tasks else self._tasks)
            if run_protocol == EvalProtocol.ONLINE.value
            or (not run_protocol and t.protocol is EvalProtocol.ONLINE)
        ]
        if online and not self.devices():
            raise SettingsError(
                f"{len(online)} of the chosen tasks run online on a phone ({online[0].id}, …): "
                "tick a phone in the Devices list under Run (it lists the phones adb sees), "
                "or set Run as to offline"
            )
        if out is None:
            text = self.out_edit.text().strip()
            if text:
                out = Path(text)
            elif self._runs_dir is not None:
                out = new_run_folder(self._runs_dir, agent, str(self.variant_combo.currentData()))
            else:
                raise SettingsError("choose an output folder for the run")
        demos = self.demos_edit.text().strip()
        judges = judge_config(self.judge_config_edit.text())
        from_file = _settings_file(self.judge_file_edit.text(), "--judge-config")
        if judges and from_file:
            raise SettingsError("the judge settings are both typed and in a file; keep one of them")
        executor = str(self.executor_combo.currentData())
        address = self.ray_address_edit.text().strip() if executor == "ray" else ""
        try:
            return RunConfig(
                suite=Path(suite),
                out=out,
                agent=agent,
                agent_config=agent_config,
                protocol=EvalProtocol(run_protocol) if run_protocol else None,
                tasks=tasks,
                variant=InstructionVariant(self.variant_combo.currentData()),
                demos=Path(demos) if demos else None,
                mode=self.mode_combo.currentData(),
                devices=self.devices(),
                workers=self.workers_spin.value(),
                judges=self.judges() or ("rule",),
                judge_config=judges or from_file,
                matching=str(self.matching_combo.currentData()),
                farm=FarmSettings(executor=executor, ray_address=address or None),
                user_simulator=_settings_file(self.user_simulator_edit.text(), "--user-simulator"),
            )
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc

    # -- helpers

    def _add_suite(self, path: Path) -> None:
        key = str(path)
        if self.suite_combo.findData(key) >= 0:
            return
        self.suite_combo.addItem(path.name, key)
        self.suite_combo.setItemData(self.suite_combo.count() - 1, key, Qt.ItemDataRole.ToolTipRole)

    def _store_agent_fields(self) -> None:
        if not self._agent:
            return
        self._agent_settings[self._agent] = AgentSettings(
            endpoint=self.endpoint_edit.text().strip(),
            model=self.model_edit.text().strip(),
            api_key_env=self.key_env_edit.text().strip(),
            prompt=self.prompt_edit.text().strip(),
            extra=self.extra_edit.text().strip(),
            family=str(self.family_combo.currentData() or ""),
        )

    def _load_tasks(self, suite: Path | None) -> None:
        self._tasks = []
        if suite is not None and suite.is_dir():
            for folder in suite_task_dirs(suite):
                try:
                    self._tasks.append(load_task(folder))
                except GraphBuilderError:
                    continue  # the runner records it as an error task with the reason
        labels = sorted({f"{d}={v}" for t in self._tasks for d, v in t.labels.items()})
        apps = sorted({t.app for t in self._tasks if t.app})
        for combo, values, any_text in (
            (self.label_filter, labels, "any label"),
            (self.app_filter, apps, "any app"),
        ):
            keep = str(combo.currentData() or "")
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(any_text, ANY)
            for value in values:
                combo.addItem(value.replace("=", ": "), value)
            _select(combo, keep)
            combo.blockSignals(False)

    # -- slots

    @Slot()
    def _on_suite_changed(self) -> None:
        data = self.suite_combo.currentData()
        self._load_tasks(Path(data) if data else None)
        self._on_filter_changed()

    @Slot()
    def _on_filter_changed(self) -> None:
        selected = len(self.selected_tasks())
        total = len(self._tasks)
        self.task_count.setText(f"{selected} of {total} tasks selected")
        self.tasks_changed.emit(selected, total)

    @Slot()
    def _on_agent_changed(self) -> None:
        self._store_agent_fields()
        self._agent = str(self.agent_combo.currentData())
        settings = self._agent_settings.get(self._agent, AgentSettings())
        self.endpoint_edit.setText(settings.endpoint)
        self.model_edit.setText(settings.model)
        self.key_env_edit.setText(settings.api_key_env)
        self.prompt_edit.setText(settings.prompt)
        self.extra_edit.setText(settings.extra)
        _select(self.family_combo, settings.family)
        self._on_family_changed()

    @Slot()
    def _on_family_changed(self) -> None:
        """Show the chosen family's default prompt (a Prompt typed above replaces it)."""
        name = str(self.family_combo.currentData() or "")
        family = FAMILIES.get(name)
        if family is None:
            self.family_prompt.setText("prompt: the agent's own")
            self.family_prompt.setToolTip("")
            return
        self.family_prompt.setText(f"default prompt: {family.prompt}")
        try:
            self.family_prompt.setToolTip(load_prompt(family.prompt))
        except ConfigError as exc:
            self.family_prompt.setToolTip(str(exc))

    @Slot()
    def _on_executor_changed(self) -> None:
        self.ray_address_edit.setEnabled(self.executor_combo.currentData() == "ray")

    @Slot()
    def _on_browse_suite_clicked(self) -> None:
        start = str(self.suite_combo.currentData() or Path.home())
        path = QFileDialog.getExistingDirectory(self, "Choose a suite folder", start)
        if path:
            self._add_suite(Path(path))
            self.suite_combo.setCurrentIndex(self.suite_combo.findData(str(Path(path))))

    @Slot()
    def _on_browse_out_clicked(self) -> None:
        start = str(self._runs_dir or Path.home())
        path = QFileDialog.getExistingDirectory(self, "Choose an empty folder for the run", start)
        if path:
            self.out_edit.setText(path)

    @Slot()
    def refresh_devices(self) -> None:
        if self._list_devices is None:
            from devices.android import list_devices

            lister: Callable[[], list[DeviceSummary]] = list_devices
        else:
            lister = self._list_devices
        self.refresh_devices_button.setEnabled(False)
        run_in_background(lister, on_done=self._on_devices_listed, on_error=self._on_listing_failed)

    def _on_devices_listed(self, devices: list[DeviceSummary]) -> None:
        self.refresh_devices_button.setEnabled(True)
        self._listed = None
        self.show_devices(devices)

    def show_devices(self, devices: list[DeviceSummary]) -> None:
        """List these devices, keeping the checks; the studio calls it on every poll."""
        listed = tuple((d.serial, d.state, d.model, d.android_version) for d in devices)
        if listed == self._listed:
            return
        self._listed = listed
        keep = set(self.devices())
        self.device_list.clear()
        for device in devices:
            details = " ".join(p for p in (device.model, device.android_version) if p)
            text = f"{device.serial} — {details or device.state}"
            item = QListWidgetItem(text)
            item.setData(SERIAL_ROLE, device.serial)
            if device.ready:
                item.setCheckState(
                    Qt.CheckState.Checked if device.serial in keep else Qt.CheckState.Unchecked
                )
            else:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
                item.setText(f"{device.serial} — {device.state}")
            self.device_list.addItem(item)
        if not devices:
            self.device_list.addItem("no devices connected (this list follows adb)")

    def _on_listing_failed(self, exc: Exception) -> None:
        self.refresh_devices_button.setEnabled(True)
        self.problem_occurred.emit(f"cannot list devices: {exc}")
