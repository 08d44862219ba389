# The resource server's public API (see `mcpkit._lazy`).
from .access import AccessToken as AccessToken
from .access import InvalidToken as InvalidToken
from .access import TokenVerifier as TokenVerifier
from .introspection import IntrospectionVerifier as IntrospectionVerifier
from .jwt_verifier import JWTVerifier as JWTVerifier
from .principal import FromPrincipal as FromPrincipal
from .resource import BearerAuth as BearerAuth
from .resource import EnvironmentAuth as EnvironmentAuth
