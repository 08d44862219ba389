"""General software vocabulary for query expansion in `search_tools`.

People ask for a "folder", a "ticket" or a "PR"; tool definitions say "directory", "issue" and
"pull request". Lexical ranking cannot see that these are the same thing, so a request's words
are expanded with the other words of their group below (scored at `EXPANSION_WEIGHT` of a word
the user wrote).

The rule for a group: an action verb of the CRUD kind that APIs of every field use, or a
standard abbreviation or spelling of a software noun. Nothing from the domain of one server
(maps, time zones, memory graphs, browsers, processes): the embedding ranker (`embeddings`)
covers meaning in general, and a list grown from one evaluation's misses would only fit that
evaluation. An earlier, longer list was cut to this rule; `make eval-tools` prints BM25 with
and without the groups.

`IDENTIFIER_SHAPES` follow the same rule for the identifiers people type instead of a noun:
shapes that mean the same thing on every server of their kind. They were written after
reading the evaluation's misses, so `make eval-tools` also prints the hybrid without them.
"""

from __future__ import annotations

#: Words that mean the same action or thing in tool descriptions (each group is symmetric).
SYNONYMS: tuple[tuple[str, ...], ...] = (
    # verbs
    ("create", "add", "new", "make", "insert"),
    ("get", "fetch", "retrieve", "read", "show", "view", "display"),
    ("list", "enumerate", "browse"),
    ("update", "edit", "modify", "change", "patch"),
    ("delete", "remove", "erase", "destroy", "drop", "discard", "purge"),
    ("search", "find", "lookup", "query", "locate"),
    ("run", "execute", "exec", "launch", "invoke"),
    ("stop", "kill", "terminate", "halt", "abort", "cancel"),
    ("send", "post", "publish"),
    ("move", "rename", "relocate"),
    ("copy", "duplicate", "clone"),
    ("upload", "attach"),
    ("assign", "reassign"),
    ("reply", "respond", "answer"),
    # abbreviations and spellings of software nouns
    ("repository", "repo"),
    ("directory", "folder", "dir"),
    ("issue", "ticket", "bug"),
    ("kubernetes", "k8s", "kube"),
    ("database", "db"),
    ("configuration", "config", "settings", "setting", "preferences"),
    ("environment", "env"),
    ("documentation", "docs", "doc"),
    ("javascript", "js"),
    ("typescript", "ts"),
    ("message", "msg"),
    ("identifier", "id"),
    ("url", "link"),
    ("website", "site", "webpage"),
    ("organization", "org", "organisation"),
    ("application", "app"),
    ("email", "mail"),
    ("label", "tag"),
)

#: Abbreviations that stand for several words.
ABBREVIATIONS: dict[str, str] = {
    "pr": "pull request",
    "prs": "pull requests",
    "mr": "merge request",
    "mrs": "merge requests",
    "ci": "continuous integration",
    "cwd": "current working directory",
    "dm": "direct message",
}

#: Identifier shapes: a request that names a thing by its identifier ("PROJ-123", "#general",
#: "octo/widgets", "notes.md", a URL) says what kind of thing it is without the noun; the noun is
#: added to the request's words. Only conventions shared across the field: an issue key of
#: Jira, Linear or YouTrack, a chat channel, an owner/name pair (repositories of GitHub, GitLab,
#: Gitea, Hugging Face), a file name with a common extension, a web address.
IDENTIFIER_SHAPES: tuple[tuple[str, str], ...] = (
    (r"\b[A-Z][A-Z0-9]+-[0-9]+\b", "issue"),
    (r"(?<!\w)#[a-z][\w-]*", "channel"),
    (r"(?<![\w/.])[\w.-]+/[\w.-]+(?![\w/])", "repository"),
    (r"\b[\w./-]+\.(?:json|ya?ml|toml|txt|md|py|js|ts|csv|log|ini|cfg|xml|html)\b", "file"),
    (r"\bhttps?://\S+", "url"),
)

#: How much an expansion word counts next to a word of the request itself.
EXPANSION_WEIGHT = 0.5
