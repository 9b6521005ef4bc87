"""Corpus cases for rank claims (numbers_recorded with a Ranking in scope) and dates_recorded.

Ranks: a Ranking of regions, products, agents or funds (some lower-is-better), and an answer
the way analytics and support answers are written ("EMEA came in second with 1,240,000",
"the second-highest revenue belonged to APAC", "the top 3 were …", "finished last"), mixed
with discourse ordinals the rule must leave alone ("First, …", "in the third quarter", "for
the second time"). A wrong answer gives an entity a rank outside the ranks it holds; the
oracle below (plain counting, independent of the checker) decides each label.

Dates: invoices, tickets and store hours, an answer naming the due date or opening hours in
the formats models write (ISO, "Dec 31, 2027", "31 December 2027", "12/31/2027", "December
31st", with the right weekday, "9am to 5pm", "9:00-17:00") around boilerplate that is not a
date claim ("as of today", "in 2026", "Q3"). A wrong answer shifts the date or the hours,
invents a date, or writes the wrong weekday.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from ._common import Emitter, repeat
from .model import Case, FactSpec

RANK_FACT = "ranking"
DATE_FACT = "records"
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]
SUFFIXED = ["1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th"]
SUBJECTS = (  # (names, key, noun, higher_is_better, unit)
    (["EMEA", "APAC", "LATAM", "North America", "ANZ", "Nordics", "DACH", "Benelux"],
     "revenue", "region", True, "$"),
    (["Pro plan", "Starter plan", "Team plan", "Enterprise plan", "Basic plan", "Edu plan"],
     "signups", "plan", True, ""),
    (["Priya", "Marcus", "Elena", "Tomás", "Aisha", "Kenji", "Fatima", "Oliver"],
     "avg_handle_time", "agent", False, ""),
    (["Growth Fund", "Income Fund", "Balanced Fund", "Index Fund", "Bond Fund", "Tech Fund"],
     "ytd_return", "fund", True, ""),
)  # fmt: skip
DISCOURSE = (
    "First, a quick note on the data: it covers the full period.",
    "In the third quarter the numbers were steadier.",
    "This is the second time we have run this report.",
    "Second, we excluded test accounts.",
    "The 2nd shift handled most of the volume.",
    "Q2 was the first full quarter on the new pipeline.",
)


# -- the rank oracle (independent of groundplane_otel) ---------------------------------------


def span(scores: dict[str, Any], name: str, direction: str, higher_is_better: bool) -> range:
    """The 1-based ranks ``name`` holds counted in ``direction`` (ties span several)."""
    if direction in ("best", "worst"):
        direction = "high" if higher_is_better == (direction == "best") else "low"
    mine = scores[name]
    if direction == "high":
        before = sum(1 for value in scores.values() if value > mine)
    else:
        before = sum(1 for value in scores.values() if value < mine)
    tied = sum(1 for value in scores.values() if value == mine)
    return range(before + 1, before + tied + 1)


def written(value: int | float, unit: str) -> str:
    if isinstance(value, float):
        return f"{value}%" if unit == "%" else repr(value)
    return f"{unit}{value:,}"


def rank_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("numbers_recorded", cases, RANK_FACT)

    def setup(rng: random.Random) -> tuple[dict[str, Any], tuple[Any, ...], list[FactSpec]]:
        subject = rng.choice(SUBJECTS)
        names_, key, _, higher, unit = subject
        count = rng.randint(4, min(8, len(names_)))
        chosen = rng.sample(names_, count)
        if key == "ytd_return":
            scores = {n: round(rng.uniform(-5, 25), 1) for n in chosen}
        elif key == "avg_handle_time":
            scores = {n: rng.randrange(180, 900) for n in chosen}
        else:
            scores = {n: rng.randrange(10, 900) * (1000 if unit == "$" else 1) for n in chosen}
        if rng.random() < 0.3:  # a tie
            first, second = rng.sample(chosen, 2)
            scores[second] = scores[first]
        spec = FactSpec("ranking", RANK_FACT, scores, {"key": key, "higher_is_better": higher})
        return scores, subject, [spec]

    def score_text(subject: tuple[Any, ...], value: int | float) -> str:
        key, unit = subject[1], subject[4]
        if key == "ytd_return":
            return f"{value}%"
        if key == "avg_handle_time":
            return f"{value} seconds"
        return written(value, unit)

    def claim(
        rng: random.Random, subject: tuple[Any, ...], name: str, rank: int, form: str, s: str
    ) -> str:
        key, noun, higher = subject[1].replace("_", " "), subject[2], subject[3]
        o, n = ORDINALS[rank - 1], str(rank)
        if form == "ordinal":
            return rng.choice(
                [
                    f"{name} came in {o} with {s}.",
                    f"{name} ranked {o} by {key}, at {s}.",
                    f"Looking at the ranking, {name} finished {o} ({s}).",
                    f"{name} is currently ranked #{n} with {s}.",
                    f"{name} holds the No. {n} spot at {s}.",
                    f"In {o} place: {name}, with {s}.",
                    f"{name} placed {SUFFIXED[rank - 1]} overall ({s}).",
                    f"{name} came a close {o} with {s}.",
                ]
                + (
                    [
                        f"{name} led with {s}.",
                        f"Our top performer was {name}, at {s}.",
                        f"{name} performed best this period ({s}).",
                        f"{name} is the clear winner with {s}.",
                    ]
                    if rank == 1
                    else []
                )
            )
        if form == "superlative":  # counted in the direction the word names
            word = "highest" if higher else "lowest"
            lead = "" if rank == 1 else f"{o}-"
            return rng.choice(
                [
                    f"{name} had the {lead}{word} {key} at {s}.",
                    f"The {lead}{word} {key} belonged to {name} ({s}).",
                    f"{name} is the {lead}best {noun} by {key}, with {s}.",
                    f"With {s}, {name} posted the {lead}{word} {key} this period.",
                ]
            )
        if form == "top":
            return rng.choice(
                [
                    f"{name} made the top {n} this period with {s}.",
                    f"{name} is in the top {n} for {key} ({s}).",
                ]
            )
        return rng.choice(  # last (the worst rank); "rank" is 1 counted from the end
            [f"{name} finished last with {s}.", f"{name} ranked last by {key} ({s})."]
        )

    def direction(form: str, subject: tuple[Any, ...]) -> str:
        if form == "superlative":
            return "high" if subject[3] else "low"
        return "worst" if form == "last" else "best"

    def answer(rng: random.Random, parts: list[str]) -> str:
        lines = parts + rng.sample(DISCOURSE, rng.randint(0, 2))
        rng.shuffle(lines)
        return " ".join(lines)

    def right_claim(
        rng: random.Random, scores: dict[str, Any], subject: tuple[Any, ...], form: str
    ) -> str:
        name = rng.choice(list(scores))
        ranks = span(scores, name, direction(form, subject), subject[3])
        if form == "last":
            worst = span(scores, name, "worst", subject[3])
            if 1 not in worst:
                best = span(scores, name, "best", subject[3])
                return claim(
                    rng,
                    subject,
                    name,
                    rng.choice(best),
                    "ordinal",
                    score_text(subject, scores[name]),
                )
            return claim(rng, subject, name, 1, form, score_text(subject, scores[name]))
        rank = rng.choice(ranks)
        if form == "top":
            rank = rng.randint(ranks.start, len(scores))
        return claim(rng, subject, name, min(rank, 8), form, score_text(subject, scores[name]))

    def correct(form: str) -> Any:
        def make(rng: random.Random) -> bool:
            scores, subject, facts = setup(rng)
            parts = [right_claim(rng, scores, subject, form)]
            if rng.random() < 0.5:
                parts.append(right_claim(rng, scores, subject, rng.choice(FORMS)))
            emit(f"correct:rank_{form}", "supported", facts, {}, {"answer": answer(rng, parts)})
            return True

        make.__name__ = f"correct_{form}"
        return make

    def correct_top_list(rng: random.Random) -> bool:
        scores, subject, facts = setup(rng)
        order = sorted(scores, key=lambda n: scores[n], reverse=subject[3])
        n = rng.randint(2, min(4, len(order) - 1))
        if scores[order[n - 1]] == scores[order[n]]:
            return False  # the cut falls inside a tie: either listing is right; skip it
        listed = order[:n]
        rng.shuffle(listed)
        text = f"The top {n} {subject[2]}s by {subject[1].replace('_', ' ')} were "
        text += ", ".join(listed[:-1]) + f" and {listed[-1]}."
        emit("correct:rank_top_list", "supported", facts, {}, {"answer": answer(rng, [text])})
        return True

    def wrong(form: str) -> Any:
        def make(rng: random.Random) -> bool:
            scores, subject, facts = setup(rng)
            name = rng.choice(list(scores))
            held = span(scores, name, direction(form, subject), subject[3])
            s = score_text(subject, scores[name])
            if form == "last":
                if 1 in held:
                    return False
                rank = 1
            elif form == "top":
                if held.start == 1:
                    return False
                rank = rng.randint(1, held.start - 1)
            else:
                others = [r for r in range(1, len(scores) + 1) if r not in held]
                rank = rng.choice(others)
            parts = [claim(rng, subject, name, rank, form, s)]
            if rng.random() < 0.5:
                parts.append(right_claim(rng, scores, subject, "ordinal"))
            code = "rank_outside_top" if form == "top" else "rank_mismatch"
            emit(f"rank_{form}", "unsupported", facts, {}, {"answer": answer(rng, parts)}, code)
            return True

        make.__name__ = f"wrong_{form}"
        return make

    def wrong_top_list(rng: random.Random) -> bool:
        scores, subject, facts = setup(rng)
        order = sorted(scores, key=lambda n: scores[n], reverse=subject[3])
        n = rng.randint(2, min(4, len(order) - 1))
        outsider = order[-1]
        if span(scores, outsider, "best", subject[3]).start <= n:
            return False
        listed = [*order[: n - 1], outsider]
        rng.shuffle(listed)
        text = f"The top {n} {subject[2]}s by {subject[1].replace('_', ' ')} were "
        text += ", ".join(listed[:-1]) + f" and {listed[-1]}."
        emit("rank_top_list", "unsupported", facts, {}, {"answer": answer(rng, [text])},
             "rank_outside_top")  # fmt: skip
        return True

    def ordered(rng: random.Random, wrong: bool) -> bool:
        """ "X led with …, followed by Y and Z" or a numbered ranking: item i claims rank i."""
        scores, subject, facts = setup(rng)
        order = sorted(scores, key=lambda n: scores[n], reverse=subject[3])
        count = rng.randint(3, len(order))
        listed = order[:count]
        if wrong:
            first, second = sorted(rng.sample(range(count), 2))
            listed[first], listed[second] = listed[second], listed[first]
        right = all(
            position in span(scores, name, "best", subject[3])
            for position, name in enumerate(listed, 1)
        )
        if right == wrong:
            return False  # a swap inside a tie is still right: not a wrong answer
        key = subject[1].replace("_", " ")
        shown = [f"{name} ({score_text(subject, scores[name])})" for name in listed]
        style = rng.choice(["followed", "list", "table"])
        if style == "followed":
            text = f"{listed[0]} led with {score_text(subject, scores[listed[0]])}, followed by "
            text += ", ".join(shown[1:-1]) + f" and {shown[-1]}." if count > 2 else f"{shown[1]}."
        elif style == "list":
            head = rng.choice([f"Ranking by {key}:", f"Here is the ranking by {key}:",
                               f"Top {subject[2]}s by {key}:"])  # fmt: skip
            text = head + "\n" + "\n".join(f"{i}. {item}" for i, item in enumerate(shown, 1))
        else:
            rows = [f"| {i} | {name} | {score_text(subject, scores[name])} |"
                    for i, name in enumerate(listed, 1)]  # fmt: skip
            text = f"| Rank | {subject[2].title()} | {key} |\n|---|---|---|\n" + "\n".join(rows)
        if wrong:
            emit("rank_order", "unsupported", facts, {}, {"answer": answer(rng, [text])},
                 "rank_mismatch")  # fmt: skip
        else:
            emit("correct:rank_order", "supported", facts, {}, {"answer": answer(rng, [text])})
        return True

    def right_order(rng: random.Random) -> bool:
        return ordered(rng, False)

    def wrong_order(rng: random.Random) -> bool:
        return ordered(rng, True)

    repeat(rng, per_class, right_order)
    repeat(rng, max(20, per_class // 2), wrong_order)
    for form in FORMS:
        repeat(rng, per_class, correct(form))
        repeat(rng, max(20, per_class // 2), wrong(form))
    repeat(rng, per_class, correct_top_list)
    repeat(rng, max(20, per_class // 2), wrong_top_list)
    return cases


FORMS = ("ordinal", "superlative", "top", "last")
RANK_FAILURES = (
    "rank_ordinal", "rank_superlative", "rank_top", "rank_last", "rank_top_list", "rank_order",
)  # fmt: skip


# -- dates ----------------------------------------------------------------------------------

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
BOILERPLATE = (
    "As of today, the account is in good standing.",
    "Figures are for fiscal 2026.",
    "Q3 collections were on track.",
    "Let me know if you need anything else.",
    "This summary reflects the latest data in the system.",
)


def styled(rng: random.Random, day: dt.date, style: str | None = None) -> str:
    """A date the way answers write it (every style is one the check must read)."""
    style = style or rng.choice(["iso", "us", "long", "uk", "short", "numeric", "weekday"])
    month = MONTHS[day.month - 1]
    if style == "iso":
        return day.isoformat()
    if style == "us":
        return f"{month} {day.day}, {day.year}"
    if style == "long":
        return f"{day.day} {month} {day.year}"
    if style == "uk":
        return f"{day.day} {month[:3]} {day.year}"
    if style == "short":
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(
            day.day % 10 if day.day not in (11, 12, 13) else 0, "th"
        )
        return f"{month} {day.day}{suffix}"
    if style == "numeric":
        return f"{day.month}/{day.day}/{day.year}"
    return f"{DAYS[day.weekday()]}, {month[:3]} {day.day}, {day.year}"


HOUR_WORDS = ["twelve", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
              "ten", "eleven"]  # fmt: skip


def clock(hour: int, style: str) -> str:
    if style == "words":
        part = (
            "in the morning"
            if hour < 12
            else ("in the afternoon" if hour < 17 else "in the evening")
        )
        return f"{HOUR_WORDS[hour % 12]} {part}"
    if style == "24":
        return f"{hour:02d}:00"
    suffix = "am" if hour < 12 else "pm"
    twelve = hour % 12 or 12
    return f"{twelve} {suffix.upper()}" if style == "AM" else f"{twelve}{suffix}"


def date_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("dates_recorded", cases, DATE_FACT)

    def setup(rng: random.Random) -> tuple[list[dict[str, Any]], dict[str, Any], list[FactSpec]]:
        base = dt.date(2027, 1, 1) + dt.timedelta(days=rng.randrange(0, 700))
        rows = []
        for number in rng.sample(range(1000, 9999), rng.randint(1, 4)):
            due = base + dt.timedelta(days=rng.randrange(0, 90))
            amount, status = rng.randrange(100, 9000), rng.choice(["open", "paid"])
            rows.append({"id": f"INV-{number}", "due": due.isoformat(), "amount": amount,
                         "status": status})  # fmt: skip
        opens, closes = rng.choice([(8, 17), (9, 17), (9, 18), (10, 20), (7, 15)])
        hours = {"weekdays": f"{opens:02d}:00-{closes:02d}:00", "timezone": "local"}
        table = FactSpec("table", DATE_FACT, rows, {"key": "id", "args": {"account": "A-77"}})
        if rng.random() < 0.5:  # the hours as a KB value, or as a retrieved document's text
            spec = FactSpec("value", "hours", hours, {"tool": "kb.lookup", "args": {"q": "hours"}})
        else:
            text = (f"Store hours: we are open {clock(opens, '12')} to {clock(closes, '12')}, "
                    "Monday to Friday. Closed on public holidays.")  # fmt: skip
            spec = FactSpec("documents", "hours", [{"id": "kb-hours", "content": text}],
                            {"tool": "kb.search"})  # fmt: skip
        facts = [table, spec]
        return rows, hours, facts

    def boiler(rng: random.Random, parts: list[str]) -> str:
        lines = parts + rng.sample(BOILERPLATE, rng.randint(0, 2))
        rng.shuffle(lines)
        return " ".join(lines)

    def due_sentence(rng: random.Random, row: dict[str, Any], written_date: str) -> str:
        return rng.choice(
            [
                f"Invoice {row['id']} is due on {written_date}.",
                f"The payment for {row['id']} (${row['amount']:,}) is due {written_date}.",
                f"{row['id']} must be paid by {written_date} to avoid a late fee.",
                f"Your next due date is {written_date}, for invoice {row['id']}.",
            ]
        )

    def hours_sentence(rng: random.Random, opens: int, closes: int) -> str:
        style = rng.choice(["12", "AM", "24", "words"])
        dash = rng.choice([" to ", "-", "\u2013"]) if style != "24" else rng.choice(["-", "\u2013"])
        if style == "words":
            dash = " to "
        return rng.choice(
            [
                f"We're open {clock(opens, style)}{dash}{clock(closes, style)}, Monday to Friday.",
                f"Support is available from {clock(opens, style)} to {clock(closes, style)}"
                " on weekdays.",
                f"Our weekday hours are {clock(opens, style)}{dash}{clock(closes, style)}.",
            ]
        )  # fmt: skip

    def opening(hours: dict[str, Any]) -> tuple[int, int]:
        start, end = hours["weekdays"].split("-")
        return int(start[:2]), int(end[:2])

    def recorded_days(rows: list[dict[str, Any]]) -> set[dt.date]:
        return {dt.date.fromisoformat(row["due"]) for row in rows}

    def correct_dates(rng: random.Random) -> bool:
        rows, hours, facts = setup(rng)
        row = rng.choice(rows)
        text = due_sentence(rng, row, styled(rng, dt.date.fromisoformat(row["due"])))
        parts = [text]
        if rng.random() < 0.4:
            parts.append(hours_sentence(rng, *opening(hours)))
        emit("correct:dates", "supported", facts, {"fact": [DATE_FACT, "hours"]},
             {"answer": boiler(rng, parts)})  # fmt: skip
        return True

    def correct_hours(rng: random.Random) -> bool:
        _, hours, facts = setup(rng)
        text = boiler(rng, [hours_sentence(rng, *opening(hours))])
        emit("correct:hours", "supported", facts, {"fact": [DATE_FACT, "hours"]},
             {"answer": text})  # fmt: skip
        return True

    def correct_boilerplate(rng: random.Random) -> bool:
        rows, _, facts = setup(rng)
        row = rng.choice(rows)
        text = f"Invoice {row['id']} is {row['status']} for ${row['amount']:,}."
        emit("correct:boilerplate", "supported", facts, {"fact": [DATE_FACT, "hours"]},
             {"answer": boiler(rng, [text, rng.choice(BOILERPLATE)])})  # fmt: skip
        return True

    def wrong(kind: str) -> Any:
        def make(rng: random.Random) -> bool:
            rows, hours, facts = setup(rng)
            row = rng.choice(rows)
            due = dt.date.fromisoformat(row["due"])
            code = "date_unrecorded"
            if kind == "date_shifted":
                claimed = due + dt.timedelta(days=rng.choice([-30, -7, -1, 1, 2, 7, 14, 31]))
                if claimed in recorded_days(rows) or (claimed.month, claimed.day) in {
                    (d.month, d.day) for d in recorded_days(rows)
                }:
                    return False
                text = due_sentence(rng, row, styled(rng, claimed, rng.choice(
                    ["iso", "us", "long", "uk", "short", "weekday"])))  # fmt: skip
            elif kind == "date_invented":
                claimed = due + dt.timedelta(days=rng.randrange(100, 400))
                text = rng.choice(
                    [
                        f"Your contract renews on {styled(rng, claimed, 'us')}.",
                        f"A technician visit is scheduled for {styled(rng, claimed, 'long')}.",
                        f"The promotion ends {styled(rng, claimed, 'iso')}.",
                    ]
                )
            elif kind == "weekday_wrong":
                wrong_day = DAYS[(due.weekday() + rng.randint(1, 6)) % 7]
                month = MONTHS[due.month - 1]
                text = due_sentence(rng, row, f"{wrong_day}, {month} {due.day}, {due.year}")
                code = "date_weekday_mismatch"
            else:  # hours_shifted: one end of the opening hours is not recorded
                opens, closes = opening(hours)
                if rng.random() < 0.5:
                    closes = closes + rng.choice([1, 2, 3])
                else:
                    opens = opens - rng.choice([1, 2])
                recorded_hours = {hour % 12 for hour in opening(hours)}
                changed = {opens, closes} - set(opening(hours))
                if any(hour % 12 in recorded_hours for hour in changed):
                    return False  # "5:00" may be 17:00: the shift landed on a recorded hour
                text = hours_sentence(rng, opens, closes)
                code = "time_unrecorded"
            emit(kind, "unsupported", facts, {"fact": [DATE_FACT, "hours"]},
                 {"answer": boiler(rng, [text])}, code)  # fmt: skip
            return True

        make.__name__ = kind
        return make

    repeat(rng, per_class * 2, correct_dates)
    repeat(rng, per_class, correct_hours)
    repeat(rng, per_class, correct_boilerplate)
    for kind in DATE_FAILURES:
        repeat(rng, per_class, wrong(kind))
    return cases


DATE_FAILURES = ("date_shifted", "date_invented", "weekday_wrong", "hours_shifted")


def ranks_dates_cases(rng: random.Random, per_class: int) -> list[Case]:
    """Both generators of this lane, in a fixed order."""
    return rank_cases(rng, per_class) + date_cases(rng, per_class)
