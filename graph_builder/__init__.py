"""Data model, on-disk formats, hierarchy parsing, state similarity, merging and graph edits.

Imports none of the project's other packages, and never Qt.
"""
