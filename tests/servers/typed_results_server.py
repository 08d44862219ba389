"""Tools whose results have every shape the web UI renders by type: text, an image,
structured content, and a failure (`isError`)."""

from mcpkit import ImageContent, Server, TextContent, ToolError

server = Server("typed-results", version="1.0")

#: A 2x2 red PNG.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg=="


@server.tool()
async def picture(caption: str = "a red square") -> list[object]:
    """A caption and an image."""
    return [TextContent(caption), ImageContent(PNG, "image/png")]


@server.tool()
async def report(city: str) -> dict[str, object]:
    """Structured content: nested objects and lists."""
    return {"city": city, "week": {"days": [{"day": 1, "sky": "clear"}, {"day": 2, "sky": None}]}}


@server.tool()
async def broken(why: str = "the sensor is offline") -> str:
    """Always fails (the result has isError)."""
    raise ToolError(why)
