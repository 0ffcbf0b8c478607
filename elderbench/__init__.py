"""ElderBench Studio: record, build, edit and evaluate task graphs for mobile GUI agents."""

__version__ = "0.1.0"
