# The OAuth client's public API (see `mcpkit._lazy`).
from ..errors import AuthorizationError as AuthorizationError
from ..errors import OAuthError as OAuthError
from .authorizers import HeadlessAuthorizer as HeadlessAuthorizer
from .authorizers import LoopbackAuthorizer as LoopbackAuthorizer
from .grants import AuthorizationCode as AuthorizationCode
from .grants import ClientCredentials as ClientCredentials
from .grants import EnterpriseManaged as EnterpriseManaged
from .grants import JwtBearer as JwtBearer
from .oauth import OAuth as OAuth
from .registration import ClientMetadata as ClientMetadata
from .token_store import FileTokenStore as FileTokenStore
from .token_store import MemoryTokenStore as MemoryTokenStore
from .token_store import TokenStore as TokenStore
from .tokens import ClientIdentity as ClientIdentity
from .tokens import TokenSet as TokenSet
