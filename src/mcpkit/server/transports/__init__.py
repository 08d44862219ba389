"""The server's transports: Streamable HTTP (a raw ASGI app, served by uvicorn), stdio, in process,
and the 2025-11-25 session wire of each. They sit above the server core (admission, dispatch,
sessions) and below `Server.run()` / `Server.http_app()`, which import them on use."""
