"""The vocabulary of rank claims in prose (what ``ordinals`` reads): data, not rules.

``GENERIC`` are nouns a rank claim may name without naming a measure ("the second-largest
region"); ``MODIFIERS`` are skipped before the measure a superlative names ("the highest total
revenue" names revenue); ``FUNCTION_WORDS`` after a superlative mean it names no measure ("the
highest was North").
"""

from __future__ import annotations

from typing import Final

__all__ = ["FUNCTION_WORDS", "GENERIC", "MODIFIERS"]

MODIFIERS: Final = frozenset((
    "total", "net", "gross", "overall", "annual", "annualized", "monthly", "quarterly", "weekly",
    "daily", "average", "avg", "mean", "median", "ytd", "cumulative",
))  # fmt: skip
FUNCTION_WORDS: Final = frozenset((
    "was", "is", "were", "are", "at", "with", "in", "on", "of", "for", "by", "to", "and", "but",
    "among", "overall", "this", "so", "far", "yet", "than", "there", "here", "while", "as",
    "after", "before", "behind", "ahead", "across", "within", "one", "ever",
))  # fmt: skip
GENERIC: Final = frozenset((
    "region", "regions", "market", "markets", "country", "countries", "city", "cities", "state",
    "states", "store", "stores", "branch", "branches", "office", "offices", "site", "sites",
    "location", "locations", "product", "products", "item", "items", "sku", "skus", "plan",
    "plans", "tier", "tiers", "model", "models", "brand", "brands", "category", "categories",
    "segment", "segments", "channel", "channels", "team", "teams", "agent", "agents", "rep",
    "reps", "employee", "employees", "customer", "customers", "client", "clients", "account",
    "accounts", "vendor", "vendors", "supplier", "suppliers", "partner", "partners", "fund",
    "funds", "portfolio", "portfolios", "stock", "stocks", "asset", "assets", "campaign",
    "campaigns", "source", "sources", "performer", "performers", "earner", "earners", "seller",
    "sellers", "ones", "entry", "entries", "rank", "ranking",
    "rankings", "list", "table", "leaderboard", "name", "names", "contributor", "contributors",
    "territory", "territories", "division", "divisions", "unit", "units", "department",
    "departments", "group", "groups", "line", "lines", "service", "services", "app", "apps",
    "feature", "features",
))  # fmt: skip
