"""Simulated apps of the virtual phone."""
