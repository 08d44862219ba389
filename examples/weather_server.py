"""A complete MCP server in 15 lines: `mcpkit run examples/weather_server.py --transport http`."""

from mcpkit import Context, Server

server = Server("weather", version="1.0")


@server.tool()
async def forecast(city: str, days: int = 3, ctx: Context | None = None) -> dict[str, object]:
    """Forecast for a city, one entry per day."""
    if ctx:
        await ctx.report_progress(1, 1, f"looked up {city}")
    return {"city": city, "days": [{"day": d + 1, "sky": "clear"} for d in range(days)]}


@server.resource("weather://cities/{name}", mime_type="text/plain")
def city(name: str) -> str:
    return f"{name}: temperate, 12°C average"
