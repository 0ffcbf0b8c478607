"""Per-task results of a run: a table model, a filter/sort proxy and the view.

Statuses are the evaluator's ``effective_status`` (human verdicts applied), the judge
column is ``judges.combine`` of the recorded verdicts, and cost is the price table's; the
table computes nothing of its own. Rows are keyed by task id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from evaluator.judges import combine
from evaluator.metrics import effective_status
from evaluator.prices import PriceTable
from evaluator.records import TaskResult, TaskStatus
from evaluator.run_store import FailureTag, HumanVerdict

TASK_ID_ROLE = Qt.ItemDataRole.UserRole
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2
REVIEW = "review"  # the status filter's value for the judge-human review queue

STATUS_COLORS = {
    TaskStatus.SUCCESS: QColor(220, 245, 226),
    TaskStatus.FAILURE: QColor(252, 228, 228),
    TaskStatus.ERROR: QColor(255, 240, 205),
}

Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True, slots=True)
class ResultRow:
    result: TaskResult
    status: TaskStatus
    human: HumanVerdict | None
    tags: tuple[FailureTag, ...]
    cost: float | None


def _judge(row: ResultRow) -> str:
    passed = combine(row.result.verification)
    return "—" if passed is None else "pass" if passed else "fail"


def _judge_tip(row: ResultRow) -> str:
    return "\n".join(
        f"{v.judge}: {'n/a' if v.passed is None else 'pass' if v.passed else 'fail'} — {v.reason}"
        for v in row.result.verification
    )


def _result(row: ResultRow) -> str:
    return row.status.value + (" (human)" if row.human is not None else "")


def _cr(row: ResultRow) -> str:
    cr = row.result.completion_rate
    return "—" if cr is None else f"{100 * cr:.0f}%"


def _human(row: ResultRow) -> str:
    if row.human is None:
        return ""
    return "success" if row.human.success else "failure"


def _cost(row: ResultRow) -> str:
    return "n/a" if row.cost is None else f"{row.cost:.4f}"


@dataclass(frozen=True, slots=True)
class Column:
    title: str
    text: Callable[[ResultRow], str]
    sort: Callable[[ResultRow], object]
    tip: Callable[[ResultRow], str] | None = None


COLUMNS: tuple[Column, ...] = (
    Column("Task", lambda r: r.result.task_id, lambda r: r.result.task_id),
    Column("App", lambda r: r.result.app, lambda r: r.result.app),
    Column("Result", _result, lambda r: (r.status.value, r.result.task_id)),
    Column("Steps", lambda r: str(r.result.steps), lambda r: r.result.steps),
    Column("CR", _cr, lambda r: -1.0 if (c := r.result.completion_rate) is None else c),
    Column(
        "Latency s",
        lambda r: f"{r.result.inference_seconds:.2f}",
        lambda r: r.result.inference_seconds,
    ),
    Column(
        "Tokens in/out",
        lambda r: f"{r.result.input_tokens}/{r.result.output_tokens}",
        lambda r: r.result.input_tokens + r.result.output_tokens,
    ),
    Column("Cost", _cost, lambda r: -1.0 if r.cost is None else r.cost),
    Column("Judge", _judge, _judge, _judge_tip),
    Column("Human", _human, _human, lambda r: r.human.note if r.human else ""),
    Column(
        "Failure reason",
        lambda r: r.result.reason or "",
        lambda r: r.result.reason or "",
        lambda r: r.result.reason or "",
    ),
    Column(
        "Failure tags",
        lambda r: ", ".join(t.title for t in r.tags),
        lambda r: ", ".join(t.title for t in r.tags),
    ),
)
COLUMN = {c.title: i for i, c in enumerate(COLUMNS)}


class ResultsModel(QAbstractTableModel):
    """One row per task (the latest result), in the order tasks finished."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ResultRow] = []
        self._by_id: dict[str, int] = {}
        self._overrides: Mapping[str, HumanVerdict] = {}
        self._tags: Mapping[str, Sequence[FailureTag]] = {}
        self._prices: PriceTable | None = None

    # -- data in

    def set_results(
        self,
        results: Sequence[TaskResult],
        overrides: Mapping[str, HumanVerdict],
        tags: Mapping[str, Sequence[FailureTag]],
        prices: PriceTable | None,
    ) -> None:
        self.beginResetModel()
        self._overrides, self._tags, self._prices = overrides, tags, prices
        self._rows = [self._row(r) for r in results]
        self._by_id = {row.result.task_id: i for i, row in enumerate(self._rows)}
        self.endResetModel()

    def add_result(self, result: TaskResult) -> None:
        """A task finished (live): replace its row or append one."""
        row = self._row(result)
        i = self._by_id.get(result.task_id)
        if i is not None:
            self._rows[i] = row
            self.dataChanged.emit(self.index(i, 0), self.index(i, len(COLUMNS) - 1))
            return
        i = len(self._rows)
        self.beginInsertRows(QModelIndex(), i, i)
        self._rows.append(row)
        self._by_id[result.task_id] = i
        self.endInsertRows()

    def _row(self, result: TaskResult) -> ResultRow:
        cost = (
            self._prices.cost(result.model, result.input_tokens, result.output_tokens)
            if self._prices is not None
            else None
        )
        return ResultRow(
            result,
            effective_status(result, self._overrides),
            self._overrides.get(result.task_id),
            tuple(self._tags.get(result.task_id, ())),
            cost,
        )

    # -- data out

    def results(self) -> list[TaskResult]:
        return [row.result for row in self._rows]

    def row_of(self, task_id: str) -> ResultRow | None:
        i = self._by_id.get(task_id)
        return None if i is None else self._rows[i]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        column = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.text(row)
        if role == SORT_ROLE:
            return column.sort(row)
        if role == TASK_ID_ROLE:
            return row.result.task_id
        if role == STATUS_ROLE:
            return row.status.value
        if role == Qt.ItemDataRole.ToolTipRole:
            # Cells are cut to fit; the tooltip always has the whole text.
            tip = column.tip(row) if column.tip is not None else ""
            return tip or column.text(row) or None
        if role == Qt.ItemDataRole.BackgroundRole and index.column() == COLUMN["Result"]:
            return QBrush(STATUS_COLORS[row.status])
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section].title
        return None


class ResultsFilterProxy(QSortFilterProxyModel):
    """Filters by status and by text (task, app, tags, reason); sorts by typed values."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(-1)
        self._status: str = ""
        self._review: frozenset[str] = frozenset()

    def set_status_filter(self, status: str) -> None:
        """``""`` for all, ``REVIEW`` for the review queue, else a TaskStatus value."""
        self.beginFilterChange()
        self._status = status
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_review_tasks(self, task_ids: frozenset[str]) -> None:
        """The tasks where a judge and the human verdict disagree."""
        self.beginFilterChange()
        self._review = task_ids
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if self._status:
            index = self.sourceModel().index(source_row, 0, source_parent)
            if self._status == REVIEW:
                if index.data() not in self._review:
                    return False
            elif index.data(STATUS_ROLE) != self._status:
                return False
        return super().filterAcceptsRow(source_row, source_parent)

    def lessThan(self, left: Index, right: Index) -> bool:
        a, b = left.data(SORT_ROLE), right.data(SORT_ROLE)
        try:
            return bool(a < b)  # type: ignore[operator]
        except TypeError:
            return str(a) < str(b)


class ResultsTableView(QTableView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsTable")
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSortingEnabled(True)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.sortByColumn(-1, Qt.SortOrder.AscendingOrder)

    def fit_columns(self, widest: int = 170) -> None:
        """Size columns to their contents, but no column wider than ``widest`` pixels."""
        self.resizeColumnsToContents()
        header = self.horizontalHeader()
        for i in range(header.count() - 1):
            header.resizeSection(i, min(header.sectionSize(i), widest))

    def task_id_at(self, index: QModelIndex) -> str | None:
        value = index.siblingAtColumn(0).data(TASK_ID_ROLE)
        return str(value) if value else None
