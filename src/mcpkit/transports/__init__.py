"""Transports move bytes between peers and the protocol core: stdio, Streamable HTTP, memory."""
