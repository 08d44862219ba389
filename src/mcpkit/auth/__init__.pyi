# `mcpkit.auth`: both halves under one name, as the examples and README import them
# (see `mcpkit._lazy`). New code may import `mcpkit.client.auth` or `mcpkit.server.auth`.
from ..client.auth import AuthorizationCode as AuthorizationCode
from ..client.auth import AuthorizationError as AuthorizationError
from ..client.auth import ClientCredentials as ClientCredentials
from ..client.auth import ClientIdentity as ClientIdentity
from ..client.auth import ClientMetadata as ClientMetadata
from ..client.auth import EnterpriseManaged as EnterpriseManaged
from ..client.auth import FileTokenStore as FileTokenStore
from ..client.auth import HeadlessAuthorizer as HeadlessAuthorizer
from ..client.auth import JwtBearer as JwtBearer
from ..client.auth import LoopbackAuthorizer as LoopbackAuthorizer
from ..client.auth import MemoryTokenStore as MemoryTokenStore
from ..client.auth import OAuth as OAuth
from ..client.auth import OAuthError as OAuthError
from ..client.auth import TokenSet as TokenSet
from ..client.auth import TokenStore as TokenStore
from ..server.auth import AccessToken as AccessToken
from ..server.auth import BearerAuth as BearerAuth
from ..server.auth import EnvironmentAuth as EnvironmentAuth
from ..server.auth import FromPrincipal as FromPrincipal
from ..server.auth import IntrospectionVerifier as IntrospectionVerifier
from ..server.auth import InvalidToken as InvalidToken
from ..server.auth import JWTVerifier as JWTVerifier
from ..server.auth import TokenVerifier as TokenVerifier
