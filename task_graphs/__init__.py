"""Shipped task suites, and the scripts that regenerate them.

``task_graphs/sample`` is a small suite on the virtual phone (see
``task_graphs.sample_recipes``); ``python -m task_graphs.generate`` rebuilds it.
"""
