"""The language of the requests: instruction statistics, model-assisted labelling and
rewrites, feature attribution, interactions and failure analysis (no Qt)."""
