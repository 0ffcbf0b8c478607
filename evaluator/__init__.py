"""Evaluation of GUI agents on ElderBench-style suites: agents, offline and online
protocols, judges, metrics, statistics, run folders and reports. No Qt."""
