# The gateway's public API (see `mcpkit._lazy`).
from .config import GatewaySettings as GatewaySettings
from .config import StaticTokens as StaticTokens
from .config import front_auth as front_auth
from .front import Front as Front
from .gateway import Gateway as Gateway
from .proxy import proxy as proxy
