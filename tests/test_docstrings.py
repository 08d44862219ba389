"""Parameter documentation from Google, NumPy and Sphinx docstrings (docstring-parser)."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated, Any

from pydantic import BaseModel, Field

from mcpkit import Server


def google(city: str, days: int = 3, units: str = "metric") -> str:
    """Forecast the weather for a city.

    Use it when the user asks about weather to come; for today's weather use `now`.

    Args:
        city: The city name, in English,
            e.g. Oslo.
        days: How many days ahead (1-7).
        units: metric or imperial.

    Returns:
        One line per day with the high and low.
    """
    return ""


def numpy(city: str, days: int = 3, units: str = "metric") -> str:
    """Forecast the weather for a city.

    Use it when the user asks about weather to come; for today's weather use `now`.

    Parameters
    ----------
    city : str
        The city name, in English,
        e.g. Oslo.
    days : int
        How many days ahead (1-7).
    units : str
        metric or imperial.

    Returns
    -------
    str
        One line per day with the high and low.
    """
    return ""


def sphinx(city: str, days: int = 3, units: str = "metric") -> str:
    """Forecast the weather for a city.

    Use it when the user asks about weather to come; for today's weather use `now`.

    :param city: The city name, in English,
        e.g. Oslo.
    :param days: How many days ahead (1-7).
    :param units: metric or imperial.
    :returns: One line per day with the high and low.
    """
    return ""


def definition(fn: Any, **options: Any) -> dict[str, Any]:
    server = Server("docs")
    server.tool("forecast", **options)(fn)
    return server.tools["forecast"].definition


def test_the_three_styles_give_the_same_definition() -> None:
    g, n, s = definition(google), definition(numpy), definition(sphinx)
    assert g == n == s
    assert g["description"] == (
        "Forecast the weather for a city.\n\n"
        "Use it when the user asks about weather to come; for today's weather use `now`.\n\n"
        "Returns: One line per day with the high and low."
    )
    props = g["inputSchema"]["properties"]
    assert props["city"] == {
        "description": "The city name, in English, e.g. Oslo.",
        "type": "string",
    }
    assert props["days"]["description"] == "How many days ahead (1-7)."
    assert props["days"]["default"] == 3 and props["days"]["type"] == "integer"
    assert g["inputSchema"]["required"] == ["city"]


class Stop(BaseModel):
    city: str


def test_an_explicit_field_description_wins() -> None:
    def plan(
        start: Annotated[str, Field(description="Where the trip starts (explicit).")],
        stops: list[Stop],
        end: str | None = None,
    ) -> str:
        """Plan a trip.

        Args:
            start: From the docstring (loses).
            stops: Places to visit, in order.
            end: Where it ends; the start when omitted.
        """
        return ""

    schema = definition(plan)["inputSchema"]
    assert schema["properties"]["start"]["description"] == "Where the trip starts (explicit)."
    assert schema["properties"]["stops"]["description"] == "Places to visit, in order."
    assert schema["properties"]["end"] == {
        "description": "Where it ends; the start when omitted.",
        "type": "string",
    }


def test_an_explicit_description_keeps_the_parameter_docs() -> None:
    d = definition(google, description="Weather to come.")
    assert d["description"] == "Weather to come."
    assert d["inputSchema"]["properties"]["units"]["description"] == "metric or imperial."


def test_plain_docstrings_are_kept_as_written() -> None:
    def lookup(sku: str) -> str:
        """Units in stock for a SKU.

        Arguments are case-sensitive."""
        return ""

    d = definition(lookup)
    assert d["description"] == "Units in stock for a SKU.\n\nArguments are case-sensitive."
    assert "description" not in d["inputSchema"]["properties"]["sku"]


def test_prompts_get_argument_descriptions() -> None:
    server = Server("p")

    @server.prompt()
    def review(code: str, focus: str = "bugs") -> str:
        """Review a piece of code.

        Args:
            code: The code to review.
            focus: What to look for.
        """
        return code

    d = server.prompts["review"].definition
    assert d["description"] == "Review a piece of code."
    assert d["arguments"] == [
        {"name": "code", "description": "The code to review.", "required": True},
        {"name": "focus", "description": "What to look for."},
    ]


def test_docstring_parser_is_imported_only_for_structured_docstrings() -> None:
    code = (
        "import sys\n"
        "from mcpkit import Server\n"
        "s = Server('x')\n"
        "@s.tool()\n"
        "def a(x: str) -> str:\n"
        "    'Plain.'\n"
        "    return x\n"
        "print('docstring_parser' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
