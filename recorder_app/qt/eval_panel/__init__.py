"""The studio's Evaluate tab: run agents with the evaluator, follow runs live, inspect
results and traces, record human verdicts and failure tags, compare runs, export reports."""

from recorder_app.qt.eval_panel.page import EvaluationPage

__all__ = ["EvaluationPage"]
