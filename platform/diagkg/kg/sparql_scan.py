"""What a SPARQL text asks for, told by one linear pass over its tokens, never by a pattern over the text.

:func:`scan` reads a query or an update as Oxigraph's parser does and says
whether it is a query or an update and which remote resources evaluating it
would fetch (``SERVICE`` and ``LOAD``, with their IRIs resolved against the
``BASE`` and ``PREFIX`` declarations). ``diagkg serve`` decides on that which
requests need the token and which hosts they may reach.

A keyword hides only inside a string, an IRI or a comment, so the scanner
follows the grammar's terminals exactly: strings in their four quotes with
escapes, IRIs with ``\\u`` escapes, prefixed names with ``%xx`` and the
escapes of ``PN_LOCAL_ESC`` (``ex:a\\#`` is a name, not a comment), comments to
the end of the line (``\\n`` or ``\\r``). The one ambiguity of SPARQL's tokens,
``<`` (an IRI, the less-than operator, or the start of ``<<``), is settled as the
grammar settles it: an operator only inside an expression after an operand.
The scanner therefore keeps track of brackets, whether each one opens an
expression (``FILTER``, ``BIND``, projections, ``ORDER BY``, ``GROUP BY``,
``HAVING``) or a pattern (groups, collections, paths, triple terms).

Every step matches one token with a pattern that never backtracks
(possessive quantifiers), and a failed attempt at a prefixed name marks the
run it read so that it is not read again: the time is linear in the length.
A string or IRI left open is a :class:`~diagkg.errors.QueryError` with its
line and column (the text is not SPARQL). Nothing here runs a query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator
from urllib.parse import urljoin, urlsplit

from ..errors import QueryError

__all__ = ["Remote", "Scan", "host_of", "is_quick", "names_dataset", "scan"]

# the grammar's character classes (SPARQL 1.1, section 19.8)
_BASE = ("A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
         "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff")
_U = _BASE + "_"
_CHARS = _U + "\\-0-9\u00b7\u0300-\u036f\u203f-\u2040"
_ESC = r"\\[_~.\-!$&'()*+,;=/?#@%]"
_PLX = rf"%[0-9A-Fa-f]{{2}}|{_ESC}"

_TOKEN = (
    r"(?P<ws>[ \t\r\n]++)"
    r"|(?P<comment>\#[^\r\n]*+)"
    # a string's body: its alternatives exclude each other, so a plain repeat cannot match it two ways (a
    # possessive repeat of a group with alternatives and a lookahead fails to match on CPython 3.11.2)
    r"|(?P<string>\"\"\"(?:[^\"\\]|\\[\s\S]|\"(?!\"\"))*\"\"\"|'''(?:[^'\\]|\\[\s\S]|'(?!''))*'''"
    r"|\"(?:[^\"\\\r\n]|\\[\s\S])*\"|'(?:[^'\\\r\n]|\\[\s\S])*')"
    r"|(?P<open>\"\"\"|'''|[\"'])"                                  # a string that never closes
    rf"|(?P<var>[?$][{_U}0-9][{_CHARS}]*+)"
    rf"|(?P<bnode>_:[{_U}0-9][{_CHARS}.]*+)"
    r"|(?P<lang>@[A-Za-z]++(?:-[A-Za-z0-9]++)*+)"
    r"|(?P<number>[0-9]++(?:\.[0-9]*+)?+(?:[eE][+-]?+[0-9]++)?+|\.[0-9]++(?:[eE][+-]?+[0-9]++)?+)"
    r"|(?P<punct>&&|\|\||\^\^|!=|>=|>>|[^<])"
)
_PREFIX_RUN = rf"[{_BASE}][{_CHARS}.]*+"      # a prefix (before ':') or a keyword (then no dots)
_WORD = rf"[{_BASE}][{_CHARS}]*+"
_LOCAL = rf"(?:[{_U}:0-9]|{_PLX})(?:[{_CHARS}.:]|{_PLX})*+"


class _Patterns:
    """The patterns above, compiled the first time a text is scanned (:func:`_patterns`), not on import: ``re``
    compiles the grammar's character classes range by range, code point by code point (~25 ms), which every
    process that opens a store paid though most never scan a text."""

    def __init__(self) -> None:
        self.token, self.prefix_run, self.word, self.local = (re.compile(p) for p in (_TOKEN, _PREFIX_RUN, _WORD, _LOCAL))


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    return _Patterns()


_IRI = re.compile(r"<(?:[^<>\"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*+>")
_UNICODE_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_LOCAL_ESCAPE = re.compile(_ESC)

QUERY_FORMS = frozenset({"SELECT", "ASK", "CONSTRUCT", "DESCRIBE"})
UPDATE_FORMS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH"})
_REMOTE = frozenset({"SERVICE", "LOAD"})
# keywords after which the brackets at that level hold expressions, until the clause ends
_CLAUSE_START = frozenset({"SELECT", "HAVING", "BY"})
_CLAUSE_END = frozenset({"WHERE", "FROM", "LIMIT", "OFFSET", "VALUES", "CONSTRUCT", "DESCRIBE", "ASK"})
_ONCE = frozenset({"FILTER", "BIND"})          # the next bracket at that level holds an expression
_OPERAND_WORDS = frozenset({"TRUE", "FALSE"})
MAX_DEPTH = 256          # brackets deeper than this: refused (Oxigraph's parser overflows its stack at a few thousand)
MAX_REMOTES = 64         # SERVICE and LOAD told one by one; past this, one more without a target (refused)


@dataclass(frozen=True)
class Remote:
    """A resource evaluating the text would fetch: ``SERVICE`` or ``LOAD`` and its IRI
    (resolved; None when it cannot be told from the text, e.g. a variable)."""

    keyword: str
    iri: str | None
    line: int
    column: int


@dataclass(frozen=True)
class Scan:
    """What a SPARQL text is: ``form`` (``query``, ``update``, or ``""`` when its first
    keyword is neither) and the remote resources it names."""

    form: str
    remotes: tuple[Remote, ...] = ()
    dataset: bool = False          # a query that states its own dataset (FROM or FROM NAMED)

    @property
    def is_update(self) -> bool:
        return self.form == "update"


@dataclass
class _Frame:
    kind: str                      # "top", "group" ({…}), "expr" ((…) of an expression), "list" ((…) otherwise),
    #                                "bracket" ([…]), "triple" (<< … >>), "term" (<<( … )>>)
    clause: bool = False           # a projection, ORDER BY, GROUP BY or HAVING: brackets here hold expressions
    once: bool = False             # after FILTER or BIND: the next bracket here holds an expression


@dataclass
class _State:
    text: str
    frames: list[_Frame] = field(default_factory=lambda: [_Frame("top")])
    operand: bool = False          # the last token ends an operand (then `<` in an expression compares)
    base: str | None = None
    prefixes: dict[str, str] = field(default_factory=dict)
    form: str = ""
    remotes: list[Remote] = field(default_factory=list)
    dataset: bool = False


def _where(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _unescape_iri(body: str) -> str:
    return _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), body)


def _resolve(st: _State, iri: str) -> str | None:
    try:
        if urlsplit(iri).scheme:
            return iri
        return urljoin(st.base, iri) if st.base else None
    except ValueError:            # e.g. a bracket that opens an IPv6 address and never closes
        return None


def scan(text: str) -> Scan:
    """Scan a SPARQL query or update (linear in its length). Raises
    :class:`~diagkg.errors.QueryError` for a string that never closes or brackets
    nested deeper than :data:`MAX_DEPTH`."""
    st = _State(text)
    lowered = text.lower()
    # keywords are never escaped: a text that does not spell them cannot fetch anything, and
    # is scanned only as far as its first keyword (what it is), unless it has brackets enough
    # to nest too deep
    whole = ("service" in lowered or "load" in lowered or "from" in lowered
             or text.count("(") + text.count("{") + text.count("[") + text.count("<<") > MAX_DEPTH)
    pending: str | None = None       # a keyword waiting for its IRI: SERVICE, LOAD, PREFIX, BASE
    pending_at = 0
    prefix_name: str | None = None
    for kind, value, pos, depth in _tokens(st):
        if kind == "word":
            word = value.upper() if value.isascii() else value
            if not st.form and word not in ("PREFIX", "BASE"):
                st.form = "query" if word in QUERY_FORMS else "update" if word in UPDATE_FORMS else "?"
                if not whole:
                    break
            if pending in _REMOTE and word == "SILENT":
                continue
            _unresolved(st, pending, pending_at)
            pending, pending_at, prefix_name = None, pos, None
            if word in _REMOTE or word in ("PREFIX", "BASE"):
                pending = word
            else:
                st.dataset = st.dataset or word == "FROM"
                _glued(st, word, pos, depth)
            continue
        if pending == "PREFIX" and kind == "pname" and prefix_name is None and value.endswith(":"):
            prefix_name = value[:-1]
            continue
        if kind in ("pname", "lang"):
            _glued(st, value.partition(":")[0].upper() if kind == "pname" else value.upper(), pos, depth)
        if pending is None:
            continue
        if pending == "PREFIX":
            if kind == "iri" and prefix_name is not None:
                resolved = _resolve(st, value)
                if resolved is None:
                    st.prefixes.pop(prefix_name, None)
                else:
                    st.prefixes[prefix_name] = resolved
        elif pending == "BASE":
            if kind == "iri":
                st.base = _resolve(st, value)
        else:
            target = None
            if kind == "iri":
                target = _resolve(st, value)
            elif kind == "pname":
                pfx, _, local = value.partition(":")
                if pfx in st.prefixes:
                    target = st.prefixes[pfx] + _LOCAL_ESCAPE.sub(lambda m: m.group(0)[1:], local)
            _remote(st, pending, target, pending_at)
        pending, prefix_name = None, None
    _unresolved(st, pending, pending_at)
    return Scan("" if st.form == "?" else st.form, tuple(st.remotes), st.dataset)


def names_dataset(text: str) -> bool:
    """Whether a query states its own dataset (``FROM``, ``FROM NAMED``): then it is evaluated over that
    one, not over the union of every graph that stands in for a default graph a query does not state (SPARQL
    1.1 Query, section 13.2). False for a text the scanner cannot read (the engine says what is wrong)."""
    if not _may_name_dataset(text):
        return False
    try:
        return scan(text).dataset
    except QueryError:
        return False


# "from" standing alone: not in a variable (?from), a prefixed name (dk:fromNode, ex:a.from) or a word (fromage)
_FROM_WORD = re.compile(r"(?<![\w?$:.\-\\])from(?![\w:.\-])", re.IGNORECASE)


def _may_name_dataset(text: str) -> bool:
    """False only where no ``FROM`` of the text can be the keyword, told without the scanner (whose patterns take
    ~25 ms to compile, where most queries say "from" in a comment only): each "from" standing alone is in a
    comment, after the first ``#`` of its line with no ``<``, quote or backslash before that ``#`` (an IRI or a
    short string never spans lines; a ``#`` after a backslash may be a name's escape). Where a long string
    (three quotes) may span lines, no quote may come before the "from" on its line at all."""
    long_strings = '"""' in text or "'''" in text
    for m in _FROM_WORD.finditer(text):
        line = text[max(text.rfind("\n", 0, m.start()), text.rfind("\r", 0, m.start())) + 1:m.start()]
        hash_at = line.find("#")
        before = line if long_strings else line[:hash_at]
        if hash_at < 0 or any(c in before for c in "<\"'\\"):
            return True
    return False


QUICK_LIMIT = 1000        # the largest LIMIT of a SELECT that counts as quick
_TERMS = frozenset({"var", "iri", "pname", "bnode", "string", "number"})


@lru_cache(maxsize=4096)       # clients send the same texts again and again (pages, dashboards)
def is_quick(text: str, limit: int = QUICK_LIMIT) -> bool:
    """Can this query not be slow, whatever the store holds? True only for the simplest
    shape of query, one triple pattern (or none), whose evaluation stops at its first
    solution (``ASK``) or after at most ``limit`` of them (``SELECT`` with ``LIMIT``):
    after any prefix and base declarations, the form (ask; or select with ``*`` or
    variables), the optional where keyword, a group holding at most one triple
    pattern (with or without its final dot) and, for a select, a limit of at most
    ``limit``. Each of the pattern's three terms is a variable, an IRI, a prefixed
    name, a blank node, a string (with its language or datatype) or a number, the
    predicate may be ``a``, and no variable appears twice (``?x ?x ?x`` would scan
    the store). Anything else (another keyword, a path, a second pattern, DISTINCT,
    OFFSET, a text that :func:`scan` says would fetch) is not quick."""
    if len(text) > 4096:
        return False
    try:
        toks = [(kind, value) for kind, value, _, _ in _tokens(_State(text), everything=True)]
    except QueryError:
        return False
    toks = [(k, v.upper() if k == "word" and v.isascii() else v) for k, v in toks]
    i = 0
    while i < len(toks) and toks[i] in (("word", "PREFIX"), ("word", "BASE")):
        shape = [("pname",), ("iri",)] if toks[i][1] == "PREFIX" else [("iri",)]
        part = toks[i + 1:i + 1 + len(shape)]
        if len(part) != len(shape) or any(k not in want for (k, _), want in zip(part, shape, strict=True)):
            return False
        if toks[i][1] == "PREFIX" and not part[0][1].endswith(":"):
            return False
        i += 1 + len(shape)
    if i >= len(toks) or toks[i] not in (("word", "ASK"), ("word", "SELECT")):
        return False
    ask = toks[i][1] == "ASK"
    i += 1
    if not ask:
        if i < len(toks) and toks[i] == ("punct", "*"):
            i += 1
        else:
            start = i
            while i < len(toks) and toks[i][0] == "var":
                i += 1
            if i == start:
                return False
    if i < len(toks) and toks[i] == ("word", "WHERE"):
        i += 1
    if i >= len(toks) or toks[i] != ("punct", "{"):
        return False
    i += 1
    names: list[str] = []
    for position in range(3 if toks[i:i + 1] != [("punct", "}")] else 0):
        if i >= len(toks):
            return False
        kind, value = toks[i]
        if position == 1 and (kind, value) == ("word", "A"):
            i += 1
            continue
        if kind not in _TERMS:
            return False
        if kind in ("var", "bnode"):
            names.append(value[1:] if kind == "var" else value)
        i += 1
        if kind == "string" and i < len(toks) and (toks[i][0] == "lang" or toks[i] == ("punct", "^^")):
            i += 1 if toks[i][0] == "lang" else 2
            if toks[i - 1][0] not in ("lang", "iri", "pname"):
                return False
    if len(set(names)) != len(names):
        return False
    if i < len(toks) and toks[i] == ("punct", "."):
        i += 1
    if i >= len(toks) or toks[i] != ("punct", "}"):
        return False
    i += 1
    if ask:
        if i != len(toks):
            return False
    elif toks[i:i + 1] != [("word", "LIMIT")] or i + 2 != len(toks) or toks[i + 1][0] != "number" \
            or not toks[i + 1][1].isdigit() or int(toks[i + 1][1]) > limit:
        return False
    found = scan(text)         # Oxigraph reads a keyword glued to a name (SERVICE:x): none may fetch
    return found.form == "query" and not found.remotes


def _remote(st: _State, keyword: str, target: str | None, pos: int) -> None:
    if len(st.remotes) > MAX_REMOTES:
        return
    line, col = _where(st.text, pos)
    st.remotes.append(Remote(keyword, target if len(st.remotes) < MAX_REMOTES else None, line, col))


def _unresolved(st: _State, pending: str | None, pos: int) -> None:
    """A SERVICE or LOAD followed by something other than an IRI or a name: its target cannot be told."""
    if pending in _REMOTE:
        assert pending is not None
        _remote(st, pending, None, pos)


def _glued(st: _State, upper: str, pos: int, depth: int) -> None:
    """Oxigraph reads a keyword where one may stand without looking at what follows it
    (``SERVICE:x`` is ``SERVICE :x``, ``trueSERVICE <…>`` is ``true SERVICE <…>``): a
    word, the prefix of a name or a language tag that holds one is taken for it (its
    target then cannot be told). ``LOAD`` begins an operation of an update (outside brackets)."""
    if "SERVICE" in upper:
        _remote(st, "SERVICE", None, pos)
    if depth == 1 and "LOAD" in upper:
        _remote(st, "LOAD", None, pos)


_SIMPLE = frozenset("(){}[].,;*+-/=!&|^~>`\\%")     # characters that are a token by themselves (or start one)
_PAIRS = frozenset({"&&", "||", "^^", "!=", ">=", ">>"})


def _tokens(st: _State, everything: bool = False) -> Iterator[tuple[str, str, int, int]]:
    """The tokens that matter to :func:`scan` as (kind, value, position, bracket depth):
    words, prefixed names (as written), IRIs (unescaped), variables and language tags.
    Whitespace, comments, strings, numbers and punctuation only move the state along
    (with ``everything``, they are told too: ``string``, ``number``, ``bnode``, ``punct``)."""
    text, n, pos = st.text, len(st.text), 0
    no_name_before = -1            # a run read for a prefixed name that had no ':' ends here
    frames = st.frames
    patterns = _patterns()
    while pos < n:
        ch = text[pos]
        if ch in _SIMPLE:
            if ch == ")" and frames[-1].kind == "term":      # a triple term closes with ')>>': an operand
                if everything:
                    yield "punct", ")>>", pos, len(frames)
                frames.pop()
                pos += 3 if text.startswith(">>", pos + 1) else 1
                st.operand = True
                continue
            pair = text[pos:pos + 2]
            if pair not in _PAIRS:
                pair = ch
            _punct(st, pair)
            if everything:
                yield "punct", pair, pos, len(frames)
            pos += len(pair)
            continue
        if ch == "<":
            if frames[-1].kind == "expr" and st.operand:     # less than (or <=)
                pos += 2 if text.startswith("<=", pos) else 1
                st.operand = False
            elif len(frames) > MAX_DEPTH:
                raise QueryError(f"brackets nested deeper than {MAX_DEPTH} levels")
            elif text.startswith("<<(", pos):                # a triple term
                frames.append(_Frame("term"))
                if everything:
                    yield "punct", "<<(", pos, len(frames)
                pos += 3
                st.operand = False
            elif text.startswith("<<", pos):                 # a reified triple
                frames.append(_Frame("triple"))
                if everything:
                    yield "punct", "<<", pos, len(frames)
                pos += 2
                st.operand = False
            elif (m := _IRI.match(text, pos)) is not None:
                yield "iri", _unescape_iri(m.group(0)[1:-1]), pos, len(frames)
                pos = m.end()
                st.operand = True
            else:                                            # not SPARQL; the parser says so
                if everything:
                    yield "punct", "<", pos, len(frames)
                pos += 1
                st.operand = False
            continue
        end = -1
        if ch == ":":
            end = pos
        elif pos >= no_name_before and (run := patterns.prefix_run.match(text, pos)) is not None:
            end = run.end()
            while text[end - 1] == ".":
                end -= 1
            if end >= n or text[end] != ":":
                no_name_before, end = end, -1
        if end >= 0:                                         # a prefixed name
            stop = end + 1
            if (local := patterns.local.match(text, stop)) is not None:
                stop = local.end()
                while text[stop - 1] == "." and text[stop - 2] != "\\":
                    stop -= 1
            yield "pname", text[pos:stop], pos, len(frames)
            pos = stop
            st.operand = True
            continue
        if (w := patterns.word.match(text, pos)) is not None:
            word = w.group(0)
            _keyword(st, word.upper() if word.isascii() else word)
            yield "word", word, pos, len(frames)
            pos = w.end()
            continue
        m = patterns.token.match(text, pos)
        assert m is not None                                 # every character is at least `punct`
        kind = m.lastgroup
        if kind == "open":
            line, col = _where(text, pos)
            raise QueryError(f"{line}:{col}: a string opened here is never closed")
        if kind == "punct":
            _punct(st, m.group(0))
            if everything:
                yield "punct", m.group(0), pos, len(frames)
        elif kind not in ("ws", "comment"):
            st.operand = True
            if kind in ("var", "lang") or everything:
                yield kind or "", m.group(0), pos, len(frames)
        pos = m.end()


def _keyword(st: _State, word: str) -> None:
    frame = st.frames[-1]
    st.operand = word in _OPERAND_WORDS
    if word in _ONCE:
        frame.once = True
    elif word in _CLAUSE_START:
        frame.clause = True
    elif word in _CLAUSE_END:
        frame.clause = False


def _punct(st: _State, p: str) -> None:
    frames = st.frames
    frame = frames[-1]
    if p in "({[" and len(frames) > MAX_DEPTH:
        raise QueryError(f"brackets nested deeper than {MAX_DEPTH} levels")
    if p == "(":
        if frame.kind == "expr" or frame.clause or frame.once:
            frames.append(_Frame("expr"))
        else:
            frames.append(_Frame("list"))
        st.operand = False
    elif p == "{":
        frame.clause = frame.once = False
        frames.append(_Frame("group"))
        st.operand = False
    elif p == "[":
        frames.append(_Frame("bracket"))
        st.operand = False
    elif p in (")", "}", "]"):
        if len(frames) > 1:
            frames.pop()
            if p == ")" and frames[-1].once and frames[-1].kind != "expr":
                frames[-1].once = False            # FILTER (…) or BIND (…) is over
        st.operand = True
    elif p == ">>":
        if frame.kind == "triple" and len(frames) > 1:
            frames.pop()
            st.operand = True
        elif frame.kind == "expr" and st.operand:
            st.operand = False                      # ?a >> … is not SPARQL; > then >
        else:
            st.operand = True
    else:
        st.operand = False


def host_of(iri: str) -> str | None:
    """The host an http(s) IRI reaches, lower-cased (``host`` or ``host:port`` is for the caller
    to compare); None for any other scheme, or an authority that is not plainly a host and port
    (user information, escapes, characters a host never has)."""
    try:
        parts = urlsplit(iri)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https"):
        return None
    netloc = parts.netloc
    if not netloc or "@" in netloc or "%" in netloc or "\\" in netloc:
        return None
    if not re.fullmatch(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?", netloc):
        return None
    return netloc.lower()
