"""Choosing or creating the task being demonstrated, saved as task.json in a suite."""

from __future__ import annotations

import re
from dataclasses import replace

from PySide6.QtCore import QRegularExpression, Qt, Signal, Slot
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from graph_builder.errors import GraphBuilderError
from graph_builder.model import (
    DEFAULT_RESET_SETTINGS,
    DEFAULT_VOCABULARIES,
    EvalProtocol,
    Labels,
    ResetRecipe,
    SettingValue,
    Task,
)
from recorder_app.errors import StudioError
from recorder_app.recording.workspace import DEFAULT_SUITE, Workspace

NEW_TASK = ""  # item data of the "New task" entry
ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"


def _pretty(label: str) -> str:
    return label.replace("_", " ")


class TaskPanel(QWidget):
    """The task form. Signals carry (suite, task id)."""

    task_selected = Signal(str, str)  # suite, task id ('' for a new, unsaved task)
    task_saved = Signal(str, str)
    problem_occurred = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("taskPanel")
        self._workspace: Workspace | None = None
        self._loading = False
        self._dirty = False
        self._loaded: Task | None = None

        self.suite_combo = QComboBox()
        self.suite_combo.setToolTip("The task suite the task belongs to")
        self.new_suite_button = QPushButton("New…")
        self.new_suite_button.setToolTip("Create a new task suite in this workspace")
        self.task_combo = QComboBox()
        self.task_combo.setToolTip("Choose a task to demonstrate, or create a new one")
        self.id_edit = QLineEdit()
        self.id_edit.setPlaceholderText("e.g. wifi-turn-on")
        self.id_edit.setValidator(QRegularExpressionValidator(QRegularExpression(ID_PATTERN)))
        self.instruction_edit = QPlainTextEdit()
        self.instruction_edit.setPlaceholderText("The request as the user said it")
        self.instruction_edit.setTabChangesFocus(True)
        self.instruction_edit.setFixedHeight(58)
        self.normalized_edit = QLineEdit()
        self.normalized_edit.setPlaceholderText("Optional: the request rewritten plainly")
        self.app_edit = QLineEdit()
        self.app_edit.setPlaceholderText("e.g. com.android.settings")
        self.protocol_combo = QComboBox()
        for p in EvalProtocol:
            self.protocol_combo.addItem(p.value, p.value)
        self.protocol_combo.setCurrentIndex(
            self.protocol_combo.findData(EvalProtocol.OFFLINE.value)
        )
        self.scenario_combo = QComboBox()
        self.syntax_list = self._label_list()
        self.semantics_list = self._label_list()
        self.clear_data_check = QCheckBox("Clear app data when resetting (pm clear)")
        self.activity_edit = QLineEdit()
        self.activity_edit.setPlaceholderText("Optional: e.g. .Settings or pkg/.MainActivity")
        self.activity_edit.setToolTip("The activity the app starts in (default: its launcher)")
        self.clear_packages_edit = QLineEdit()
        self.clear_packages_edit.setPlaceholderText("Optional: other packages, comma-separated")
        self.clear_packages_edit.setToolTip(
            "Other apps whose data is cleared (pm clear) before each demo and run"
        )
        self.settings_edit = QPlainTextEdit()
        self.settings_edit.setObjectName("resetSettings")
        self.settings_edit.setPlaceholderText("One per line: NAMESPACE KEY VALUE")
        self.settings_edit.setToolTip(
            "System settings restored (settings put) before each demo and run, one per "
            "line, e.g. 'system font_scale 1.0'; they are restored even when the task has "
            "no app package"
        )
        self.settings_edit.setTabChangesFocus(True)
        self.settings_edit.setFixedHeight(76)
        self.snapshot_edit = QLineEdit()
        self.snapshot_edit.setPlaceholderText("Optional: a saved whole-phone snapshot")
        self.snapshot_edit.setToolTip(
            "Loaded first: a whole-phone snapshot saved on the virtual phone (or an "
            "emulator) with `virtualphone snapshot save NAME`; leave empty on a real phone"
        )
        self.annotator_edit = QLineEdit()
        self.annotator_edit.setPlaceholderText("Your annotator id")
        self.save_button = QPushButton("Save task")
        self.save_button.setToolTip("Save task.json in the suite folder")

        suite_row = QHBoxLayout()
        suite_row.addWidget(self.suite_combo, 1)
        suite_row.addWidget(self.new_suite_button)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Suite", suite_row)
        form.addRow("Task", self.task_combo)
        form.addRow("Id", self.id_edit)
        form.addRow("Instruction", self.instruction_edit)
        form.addRow("Normalized", self.normalized_edit)
        form.addRow("App package", self.app_edit)
        form.addRow("Protocol", self.protocol_combo)
        form.addRow("Scenario", self.scenario_combo)
        form.addRow("Syntax", self.syntax_list)
        form.addRow("Semantics", self.semantics_list)
        form.addRow("Annotator", self.annotator_edit)
        self.reset_box = QGroupBox("Reset before each demo and run")
        self.reset_box.setObjectName("resetRecipe")
        reset_form = QFormLayout(self.reset_box)
        reset_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        reset_form.addRow("Snapshot", self.snapshot_edit)
        reset_form.addRow("Settings", self.settings_edit)
        reset_form.addRow("Also clear", self.clear_packages_edit)
        reset_form.addRow("", self.clear_data_check)
        reset_form.addRow("Start activity", self.activity_edit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addLayout(form)
        layout.addWidget(self.reset_box)
        layout.addWidget(self.save_button, 0, Qt.AlignmentFlag.AlignRight)

        self.suite_combo.currentIndexChanged.connect(self._on_suite_changed)
        self.new_suite_button.clicked.connect(self._on_new_suite_clicked)
        self.task_combo.currentIndexChanged.connect(self._on_task_changed)
        self.save_button.clicked.connect(self._on_save_clicked)
        for edit in (
            self.id_edit,
            self.normalized_edit,
            self.app_edit,
            self.activity_edit,
            self.clear_packages_edit,
            self.snapshot_edit,
        ):
            edit.textEdited.connect(self._on_form_edited)
        self.instruction_edit.textChanged.connect(self._on_form_edited)
        self.settings_edit.textChanged.connect(self._on_form_edited)
        for combo in (self.protocol_combo, self.scenario_combo):
            combo.currentIndexChanged.connect(self._on_form_edited)
        for lst in (self.syntax_list, self.semantics_list):
            lst.itemChanged.connect(self._on_form_edited)
        self.clear_data_check.toggled.connect(self._on_form_edited)
        self._set_vocabularies(DEFAULT_VOCABULARIES)

    @staticmethod
    def _label_list() -> QListWidget:
        lst = QListWidget()
        lst.setFixedHeight(76)
        lst.setToolTip("Tick every label that applies")
        return lst

    # -- public API

    def set_workspace(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._loading = True
        self.suite_combo.clear()
        for name in workspace.suite_names():
            self.suite_combo.addItem(name, name)
        self._loading = False
        index = self.suite_combo.findData(DEFAULT_SUITE)
        self.suite_combo.setCurrentIndex(max(index, 0))
        self._on_suite_changed()

    @property
    def suite(self) -> str:
        return self.suite_combo.currentData() or DEFAULT_SUITE

    @property
    def task_id(self) -> str:
        """The selected saved task's id ('' while a new task is being written)."""
        return self.task_combo.currentData() or NEW_TASK

    @property
    def annotator(self) -> str:
        return self.annotator_edit.text().strip()

    def select_task(self, suite: str, task_id: str) -> None:
        index = self.suite_combo.findData(suite)
        if index >= 0:
            self.suite_combo.setCurrentIndex(index)
        index = self.task_combo.findData(task_id)
        if index >= 0:
            self.task_combo.setCurrentIndex(index)

    def form_task(self) -> Task:
        """The task the form describes; ValueError (plain words) when it is not valid."""
        task_id = self.id_edit.text().strip()
        instruction = self.instruction_edit.toPlainText().strip()
        if not task_id:
            raise ValueError("Give the task an id (letters, digits, '.', '_' or '-').")
        if not instruction:
            raise ValueError("Write the instruction as the user said it.")
        app = self.app_edit.text().strip()
        # Fields the form does not show (max_steps, success criteria, ...) are kept.
        base = self._loaded if self._loaded and self._loaded.id == task_id else None
        try:
            reset = self._form_reset(app, base.reset if base else None)
            return replace(
                base or Task(id=task_id, instruction=instruction),
                instruction=instruction,
                normalized_instruction=self.normalized_edit.text().strip() or None,
                app=app,
                protocol=EvalProtocol(self.protocol_combo.currentData()),
                labels=Labels(
                    scenario=self.scenario_combo.currentData() or None,
                    syntax=self._checked(self.syntax_list),
                    semantics=self._checked(self.semantics_list),
                ),
                reset=reset,
            )
        except (ValueError, GraphBuilderError) as exc:
            raise ValueError(str(exc)) from exc

    def commit(self) -> Task | None:
        """Save the form if it changed; the saved task, or None (the problem is reported)."""
        try:
            task = self.form_task()
            if self._dirty or not self.task_id:
                self._save(task)
        except (ValueError, StudioError, GraphBuilderError) as exc:
            self.problem_occurred.emit(str(exc))
            return None
        return task

    def _form_reset(self, app: str, old: ResetRecipe | None) -> ResetRecipe | None:
        """The reset recipe of the form; None when it would do nothing."""
        settings = []
        for number, line in enumerate(self.settings_edit.toPlainText().splitlines(), 1):
            if line.strip():
                try:
                    settings.append(SettingValue.parse(line))
                except GraphBuilderError as exc:
                    raise ValueError(f"Reset settings, line {number}: {exc}") from exc
        recipe = replace(
            old or ResetRecipe(package=app),
            package=app,
            activity=self.activity_edit.text().strip() or None,
            clear_data=self.clear_data_check.isChecked(),
            settings=tuple(settings),
            clear_packages=tuple(
                p for p in re.split(r"[,\s]+", self.clear_packages_edit.text()) if p
            ),
            snapshot=self.snapshot_edit.text().strip() or None,
        )
        bad = recipe.bad_packages()
        if bad:
            raise ValueError(f"{bad[0]!r} is not an Android package name (e.g. com.example.app).")
        return None if recipe.is_empty else recipe

    # -- slots

    @Slot()
    def _on_suite_changed(self) -> None:
        if self._loading or self._workspace is None:
            return
        try:
            suite = self._workspace.load_suite(self.suite)
            vocabularies = suite.vocabularies
        except GraphBuilderError as exc:
            self.problem_occurred.emit(str(exc))
            vocabularies = DEFAULT_VOCABULARIES
        self._set_vocabularies(vocabularies)
        self._reload_tasks(select=None)

    @Slot()
    def _on_new_suite_clicked(self) -> None:
        if self._workspace is None:
            return
        name, ok = QInputDialog.getText(self, "New suite", "Suite name:")
        if not ok or not name.strip():
            return
        try:
            self._workspace.create_suite(name.strip())
        except (StudioError, GraphBuilderError) as exc:
            self.problem_occurred.emit(str(exc))
            return
        self.set_workspace(self._workspace)
        self.suite_combo.setCurrentIndex(self.suite_combo.findData(name.strip()))

    @Slot()
    def _on_task_changed(self) -> None:
        if self._loading:
            return
        task_id = self.task_id
        self._loading = True
        try:
            if task_id and self._workspace is not None:
                try:
                    self._fill(self._workspace.load_task(self.suite, task_id))
                except GraphBuilderError as exc:
                    self.problem_occurred.emit(str(exc))
            else:
                self._fill(None)
        finally:
            self._loading = False
        self._dirty = False
        self.id_edit.setReadOnly(bool(task_id))
        self.task_selected.emit(self.suite, task_id)

    @Slot()
    def _on_save_clicked(self) -> None:
        try:
            self._save(self.form_task())
        except (ValueError, StudioError, GraphBuilderError) as exc:
            self.problem_occurred.emit(str(exc))

    @Slot()
    def _on_form_edited(self) -> None:
        if not self._loading:
            self._dirty = True

    # -- internals

    def _save(self, task: Task) -> None:
        assert self._workspace is not None
        existing = bool(self.task_id)
        self._workspace.save_task(self.suite, task, overwrite=existing)
        self._dirty = False
        self._reload_tasks(select=task.id)
        self.task_saved.emit(self.suite, task.id)

    def _reload_tasks(self, select: str | None) -> None:
        assert self._workspace is not None
        self._loading = True
        self.task_combo.clear()
        self.task_combo.addItem("New task…", NEW_TASK)
        for task_id in self._workspace.task_ids(self.suite):
            self.task_combo.addItem(task_id, task_id)
        self._loading = False
        index = self.task_combo.findData(select) if select else -1
        first_saved = min(1, self.task_combo.count() - 1)
        self.task_combo.setCurrentIndex(index if index >= 0 else first_saved)
        self._on_task_changed()

    def _set_vocabularies(self, vocabularies: object) -> None:
        vocab = dict(vocabularies)  # type: ignore[call-overload]
        self._loading = True
        self.scenario_combo.clear()
        self.scenario_combo.addItem("(none)", "")
        for label in vocab.get("scenario", ()):
            self.scenario_combo.addItem(_pretty(label), label)
        for lst, key in ((self.syntax_list, "syntax"), (self.semantics_list, "semantics")):
            lst.clear()
            for label in vocab.get(key, ()):
                item = QListWidgetItem(_pretty(label))
                item.setData(Qt.ItemDataRole.UserRole, label)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Unchecked)
                lst.addItem(item)
        self._loading = False

    @staticmethod
    def _checked(lst: QListWidget) -> tuple[str, ...]:
        return tuple(
            lst.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(lst.count())
            if lst.item(i).checkState() == Qt.CheckState.Checked
        )

    @staticmethod
    def _check(lst: QListWidget, labels: tuple[str, ...]) -> None:
        for i in range(lst.count()):
            item = lst.item(i)
            on = item.data(Qt.ItemDataRole.UserRole) in labels
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def _fill(self, task: Task | None) -> None:
        self._loaded = task
        self.id_edit.setText(task.id if task else "")
        self.instruction_edit.setPlainText(task.instruction if task else "")
        self.normalized_edit.setText((task.normalized_instruction or "") if task else "")
        self.app_edit.setText(task.app if task else "")
        protocol = task.protocol.value if task else EvalProtocol.OFFLINE.value
        self.protocol_combo.setCurrentIndex(self.protocol_combo.findData(protocol))
        scenario = (task.labels.scenario or "") if task else ""
        self.scenario_combo.setCurrentIndex(max(0, self.scenario_combo.findData(scenario)))
        self._check(self.syntax_list, task.labels.syntax if task else ())
        self._check(self.semantics_list, task.labels.semantics if task else ())
        reset = task.reset if task else None
        self.clear_data_check.setChecked(bool(reset and reset.clear_data))
        self.activity_edit.setText((reset.activity or "") if reset else "")
        self.clear_packages_edit.setText(", ".join(reset.clear_packages) if reset else "")
        self.snapshot_edit.setText((reset.snapshot or "") if reset else "")
        # A new task restores the settings most often left changed; a saved one, its own.
        settings = (
            [SettingValue(*v) for v in DEFAULT_RESET_SETTINGS]
            if task is None
            else list(reset.settings if reset else ())
        )
        self.settings_edit.setPlainText("\n".join(v.describe() for v in settings))
