"""The host's context budget in one file (the example of docs/host-context.md; the tests run it).

A per-agent tool filter and catalogue budget (over budget: the model searches for tools),
an output budget per result (overflow paged with read_result), and an `on_call` hook that
adds the signed-in user to each call's `_meta`. The model here is `ScriptedModel`, a
deterministic stand-in (not AI); pass `make_model("anthropic:...")` for a real one.
"""

import sys

from mcpkit.host import (
    AssistantMessage,
    CallExtras,
    CallInfo,
    Host,
    ScriptedModel,
    TerminalUI,
    ToolCall,
    ToolSettings,
    parse_config,
)

config = parse_config(
    {
        "mcpServers": {
            "weather-service-eu-west-production": {
                "command": sys.executable,
                "args": ["-m", "mcpkit.cli", "run", "examples/weather_server.py"],
                "alias": "weather",  # tool names: weather__forecast
                "trusted": True,  # its instructions join the system prompt
            }
        }
    }
)
tools = ToolSettings.from_config(
    {"allow": ["weather__*"], "budget": 40, "alwaysOn": [], "resultBudget": 2000}
)


def per_user(call: CallInfo) -> CallExtras:
    return CallExtras(meta={"com.example/user": "dana"})  # reaches the server in _meta


def step(*calls: tuple[str, dict[str, object]]) -> object:
    return lambda history, offered: AssistantMessage(
        "", [ToolCall(f"c{i}", name, args) for i, (name, args) in enumerate(calls)]
    )


model = ScriptedModel(
    [
        step(("search_tools", {"query": "weather forecast for a city"})),
        step(("weather__forecast", {"city": "Oslo", "days": 2})),
        lambda history, offered: AssistantMessage("Clear skies in Oslo."),
    ]
)


async def main() -> str:
    ui = TerminalUI(auto_confirm=lambda call: True)
    async with Host(config, model=model, ui=ui, on_call=per_user) as host:
        agent = host.agent(system="You answer weather questions.", tools=tools)
        return await agent.ask("What's the weather in Oslo?")


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(main()))
