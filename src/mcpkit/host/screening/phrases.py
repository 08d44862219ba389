"""Instruction-like text: what reads as orders to the model rather than a tool's description.

Each pattern has a kind and a weight: `hold` patterns alone flag a definition for the user's
approval; `hint` patterns only beside a hint of another rule (a careful real description may
say "you must give a path" or name a token it needs). Written after published tool-poisoning
examples (see eval/screening.json for the sources) and checked against the real catalogues
of tests/data/tool_catalogues (`make eval-screening`).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Phrase:
    kind: str
    hold: bool
    pattern: re.Pattern[str]
    text: str


#: The patterns, one entry a paragraph: "kind hold|hint: what it means", then the regular
#: expression over as many lines as it takes (joined without their indentation; %NAME% stands
#: for a part below). Case is ignored.
_TABLE = r"""
addresses-model hold: tells the model to ignore its instructions
    \b(?:ignore|disregard|forget|override)\b[\w\s,]{0,30}?\b(?:previous|prior|above|
    earlier|preceding|other|all|any|system|original)\b[\w\s]{0,20}?\b(?:instructions?|
    rules|directions|prompts?|guidelines|messages)\b

addresses-model hold: an <IMPORTANT>-style block addressed to the model
    <\s*/?\s*(?:important|system|secret|hidden|admin|critical)\s*>|
    \[/?INST\]|<\|im_start\|>|\{\{\s*system

addresses-model hold: tells the model to keep something from the user
    \b(?:do\s*n[o']t|never|must\s+not|should\s*n[o']t|without)\s+(?:\w+\s+){0,2}?
    (?:tell|telling|inform|informing|notify|notifying|alert|alerting|mention|mentioning|
    reveal|revealing|show|showing|let)\s+(?:\w+\s+){0,1}?(?:the\s+)?user\b|
    \b(?:hide|conceal|keep)\b[\w\s]{0,20}?\bfrom\s+the\s+user\b|
    \bthe\s+user\s+(?:must|should)\s*(?:not|n't)\s+(?:know|see|notice|be\s+told)

addresses-model hint: speaks to the model as its operator
    \b(?:note|message|instructions?|attention)\s+(?:to|for)\s+(?:the\s+)?(?:ai|assistant|
    model|llm|agent)\b|\bas\s+an\s+ai\b|\byour\s+(?:new|real|true)\s+(?:task|instructions?|
    goal|role)\b|\bsystem\s+prompt\b|\bthis\s+is\s+(?:very\s+|extremely\s+)?important\b

addresses-model hold: claims the user's approval or takes the model over
    \b(?:never|do\s*n[o']t|without)\s+ask(?:ing)?\s+(?:the\s+user\s+)?(?:for\s+)?
    (?:confirmation|permission|approval|consent)\b|\b(?:user|you)\s+(?:has|have)\s+
    (?:already\s+)?(?:approved|authori[sz]ed|allowed|consented)\b|\bfrom\s+now\s+on,?\s+
    you\b|\byou\s+are\s+now\b|\bobey\b

asks-for-secrets hold: asks for a secret from the environment
    \b(?:value|contents?)\s+of\s+(?:the\s+)?\$?[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD|
    PASS|CREDENTIALS)\b|%GIVE%[\w\s,'\"`]{0,30}?\b(?:all\s+|every\s+)?
    (?:the\s+)?(?:environment|env)\s+variables\b

exfiltration hold: a markdown image that carries data out
    !\[[^\]]*\]\(\s*(?:https?:)?//[^)\s]*\?[^)\s]*\)

dangerous-command hold: asks to run a destructive or remote command
    \brm\s+-[a-z]*r[a-z]*f?\s+[~/*]|\b(?:curl|wget)\b[^|\n]{0,80}\|\s*(?:ba|z)?sh\b|
    \bchmod\s+(?:-R\s+)?777\b|\bmkfs\b|\bdd\s+if=

exfiltration hold: sends data out quietly
    \b(?:silently|quietly|secretly|covertly)\s+(?:\w+\s+){0,2}?(?:upload|send|post|
    forward|transmit|copy|share|exfiltrat\w*)(?:s|es|ed|ing)?\b

addresses-model hint: orders the model about
    \bbefore\s+(?:using|calling|running)\s+(?:this|any)\b[\w\s]{0,30}?\b(?:you|first)\b|
    \b(?:always|first)\s+(?:call|use|run|invoke)\s+(?:this|me)\b

asks-for-secrets hold: asks for a secret file
    \b(?:read|include|pass|send|cat|open|attach|append|upload|copy|provide|content|put|load|
    look|grab|ask)
    [\w\s,'\"`]{0,60}?%SECRET_FILE%|%SECRET_FILE%
    [\w\s,'\"`/.~-]{0,60}?\b(?:content|contents|pass|send|include|parameter|argument|field)

asks-for-secrets hold: asks for the user's secrets or conversation
    %GIVE%[\w\s,'\"`]{0,20}?\b(?:the\s+user'?s|your|their|all(?:\s+the)?|every|any)\s+
    (?:\w+\s+)?%SECRET%|%GIVE%[\w\s,'\"`]{0,30}?\b(?:conversation|chat|
    message)\s+(?:history|log|transcript)

asks-for-secrets hint: asks for a secret
    %GIVE%[\w\s,'\"`]{0,40}?\b(?:the\s+|a\s+)?%SECRET%

exfiltration hold: sends data to an address
    \b%SEND%(?:s|es|ed|ing)?\b[^.\n]{0,80}?\bto\b[^.\n]{0,30}?%DEST%|\bexfiltrat\w*

exfiltration hold: copies mail to someone else
    \b(?:bcc|cc|forward|redirect)\b[^.\n]{0,40}?\b(?:all|every|each)\b[^.\n]{0,30}?
    \b(?:e-?mails?|messages?)\b|\b(?:change|replace|set)\s+the\s+recipient

addresses-model hold: speaks to the model by name, as a letter's greeting
    (?:(?:^|[.!?;>\]]\s*|\bdear\s+)(?:the\s+)?|\n\s*)(?:(?:ai|llm)\s+)?(?:assistant|ai|model|llm|
    agent|chatbot)s?(?:\s+reading\s+this)?\s*[:,](?!\s*\d)

addresses-model hold: gives the model a new role or says who it serves now
    \byou(?:'re|\s+are)\s+no\s+longer\b|\byour\s+(?:operator|owner|creator|priority|
    priorities|role|persona)\s+(?:has|have|is|are)\s+(?:changed|now|updated)\b|
    \bfrom\s+this\s+point(?:\s+on)?\b|\b(?:system|admin|developer)\s+override\b|
    \bnew\s+(?:system\s+)?(?:policy|instructions|rules)\s*:|\bin\s+the\s+voice\s+of\b|
    \b(?:ai|assistants?|llms?|models?|agents?)\s+reading\s+this\b

addresses-model hold: a [system]-style block
    \[\s*/?\s*(?:system|admin|instructions?|assistant)\s*\]

addresses-model hold: pushes the model to prefer this tool over others
    \b(?:pick|prefer|choose|use|select)\s+this\s+(?:tool|server|one)\s+(?:over|instead\s+of|
    rather\s+than|above)\s+(?:any|all|every)\b|\bover\s+(?:any|all|every)\s+other\s+(?:\w+\s+)?tools?\b|
    \b(?:never|do\s*n[o']t)\s+(?:call|use)\s+the\s+other\b|\bsupersedes\b

addresses-model hold: keeps the user out of it, in other words
    \b(?:user|person|human|whoever[\w\s]{0,25}?)\s+(?:\w+\s+){0,3}?(?:does\s*n[o']t|does\s+not|
    need\s*n[o']t|need\s+not)\s+(?:need\s+to\s+)?(?:know|hear|see|notice|be\s+told)\b|
    \b(?:leave|keep)\s+(?:it|this|that)\s+out\s+of\s+(?:the\s+|your\s+)?(?:replies|answers?|
    responses?)\b|\b(?:without|no\s+need\s+to|do\s*n[o']t|do\s+not|never)\s+(?:\w+\s+){0,2}?
    (?:telling|alerting|informing|check(?:ing)?\s+with|confirm|pause|pausing)\b|
    \bpre-?approved\b|\b(?:turn\s+off|disable|bypass|skip)\s+(?:\w+\s+){0,2}?(?:safety|
    confirmations?|approvals?|guardrails?|consent)\b

exfiltration hold: an outside address as where data goes
    %SENDISH%[^.\n]{0,100}?%DEST%|%DEST%[^\n]{0,60}?%SENDISH%|\b(?:hidden|blind|secret|
    silent)\s+copy\b

addresses-model hold: orders in another language (ignore instructions, tell the user nothing)
    \bignore[rz]?\s+(?:toutes\s+)?les\s+instructions\s+pr[ée]c[ée]dentes|\bignora\s+
    (?:todas\s+)?las\s+instrucciones\s+(?:anteriores|previas)|\bignorier\w*\s+(?:alle\s+)?
    (?:vorherigen|bisherigen|vorigen)\s+anweisungen|\bignora\s+(?:tutte\s+)?le\s+istruzioni\s+
    precedenti|\bignore\s+(?:todas\s+)?as\s+instru[çc][õo]es\s+anteriores|以前の指示|前の指示|
    忽略(?:之前|以前|先前)|ne\s+(?:le\s+)?dis\s+(?:rien\s+)?(?:pas\s+)?à\s+l'utilisateur|
    sans\s+(?:pr[ée]venir|avertir|le\s+dire)|no\s+(?:le\s+)?(?:digas|informes|avises)\s+al\s+
    usuario|sin\s+avisar|ohne\s+(?:den\s+)?(?:nutzer|benutzer)\s+zu|(?:nutzer|benutzer)\s+
    nichts|non\s+dire\s+all'utente|senza\s+avvisare|sem\s+avisar|n[ãa]o\s+(?:conte|diga)\s+
    ao\s+usu[áa]rio|ユーザーに(?:は)?(?:伝え|知らせ|言わ)ない|不要告诉用户

asks-for-secrets hint: names a password in another language
    mots?\s+de\s+passe|contraseñas?|passw[öo]rt(?:er)?\b|\bsenhas?\b|パスワード|密码
"""
_PARTS = {
    "SECRET": r"""(?:api[\s_-]?keys?|access[\s_-]?tokens?|secret(?:s|[\s_-]keys?)?|passwords?|
        passwd|credentials?|private[\s_-]keys?|session[\s_-]cookies?|seed phrase|mnemonic)""",
    "SECRET_FILE": r"""(?:~/\.ssh|\.ssh/|id_rsa|id_ed25519|authorized_keys|\.aws/credentials|
        /etc/(?:passwd|shadow)|(?<![\w-])\.env\b|\.npmrc|\.netrc|\.pgpass|\.git-credentials|
        \.kube/config|\bmcp\.json\b|claude_desktop_config|\.cursor/|_history\b|\.gitconfig|
        \.git/config|\.docker/config|gh/hosts\.yml|\.config/gcloud|keychain|login\s+data|
        \bcookies\b|clipboard|print-access-token|recovery\s+(?:words|phrase)|
        authorization\s+header|private[\s_-]key[\s_-]file)""",
    "SENDISH": r"""\b(?:send|sends|sent|sending|deliver\w*|forward\w*|post|posts|posted|push|
        pushes|upload\w*|e-?mail\w*|mail\w*|relay\w*|transmit\w*|cc|bcc|reach|reaches|
        archive|envoie\w*|envoy\w*|env[íi]a\w*|envi[ae]\w*|schick\w*|sende\w*|invia\w*)\b""",
    "GIVE": r"""\b(?:include|pass|send|provide|attach|append|collect|extract|share|put|give|
        add|insert|copy|paste|supply|fill|embed|write)\b""",
    "SEND": r"""(?:send|forward|post|upload|transmit|e-?mail|mail|bcc|cc|copy|leak|
        exfiltrat\w*|redirect)""",
    "DEST": r"""(?:(?:https?|ftp|wss?)://(?!(?:www\.)?example\.)[\w-]+\.[^\s\"'<>]+|
        [\w.+-]+@(?!example\.)[\w-]+\.[\w.]+)""",
}


def _joined(lines: str) -> str:
    """A pattern written over several lines, as one (each line's indentation dropped)."""
    return "".join(line.strip() for line in lines.strip().splitlines())


def _parse(table: str) -> tuple[Phrase, ...]:
    parts = {name: _joined(text) for name, text in _PARTS.items()}
    phrases = []
    for entry in table.strip().split("\n\n"):
        head, body = entry.split("\n", 1)
        label, text = head.split(": ", 1)
        kind, weight = label.split(" ")
        pattern = _joined(body)
        for name, part in parts.items():
            pattern = pattern.replace(f"%{name}%", part)
        phrases.append(Phrase(kind, weight == "hold", re.compile(pattern, re.IGNORECASE), text))
    return tuple(phrases)


PHRASES = _parse(_TABLE)


@dataclass(frozen=True, slots=True)
class Match:
    kind: str
    hold: bool
    text: str
    excerpt: str


def find_phrases(text: str) -> Iterator[Match]:
    """Each pattern that matches `text`, with the words it matched (short)."""
    yield from _matches(text)


@functools.lru_cache(maxsize=65536)
def _matches(text: str) -> tuple[Match, ...]:
    """Remembered by text: the same parameter names and descriptions recur across servers
    (`owner`, `repo`, "The page number"), and a host re-reads a catalogue when it changes."""
    out = []
    for phrase in PHRASES:
        found = phrase.pattern.search(text)
        if found:
            excerpt = " ".join(found.group(0).split())
            out.append(Match(phrase.kind, phrase.hold, phrase.text, excerpt[:80]))
    return tuple(out)


def _words(name: str) -> bool:
    """A name distinctive enough to count as naming that tool: `send_email`, `getIssue`."""
    camel = any(a.islower() and b.isupper() for a, b in itertools.pairwise(name))
    return len(name) >= 5 and ("_" in name or "-" in name or camel)


def named_tools(text: str, others: Iterable[str]) -> list[str]:
    """The names in `others` (other servers' tools, or `server__tool` aliases) that `text`
    mentions as whole words."""
    words = set(WORD.findall(text))
    return [name for name in others if name in words and _words(name)]


WORD = re.compile(r"[\w-]+")
