"""Data files of the studio: icons, style sheets, prompt templates, price tables, lexicons."""
