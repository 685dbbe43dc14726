"""diagkg.kg.sparql_scan against Oxigraph itself: a table of hostile SPARQL (escapes,
Unicode, comments, SERVICE and LOAD spelt every way, huge literals), each run by
pyoxigraph on an empty store with its SERVICE pointing at a real HTTP server started
here. Whenever Oxigraph would fetch, the scanner must name a remote resource whose
host is that server's (or one it cannot tell, which the server refuses); where
Oxigraph fetches nothing, the scanner names nothing.
"""

from __future__ import annotations

import http.server
import threading

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagkg.errors import QueryError
from diagkg.kg.sparql_scan import MAX_DEPTH, host_of, is_quick, scan


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def _answer(self) -> None:
        type(self).hits.append(self.path)
        self.send_response(500)
        self.send_header("content-length", "0")
        self.end_headers()

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def remote():
    """A real HTTP server that records every request; its host:port."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{srv.server_port}"
    srv.shutdown()
    srv.server_close()


def oxigraph_fetches(text: str, update: bool = False) -> bool | None:
    """Does Oxigraph fetch anything evaluating ``text`` on an empty store? None: it refuses the text."""
    _Recorder.hits = []
    store = ox.Store()
    try:
        if update:
            store.update(text)
        else:
            result = store.query(text)
            if not isinstance(result, ox.QueryBoolean):
                list(result)
    except SyntaxError:
        return None
    except (OSError, RuntimeError, ValueError):
        pass            # the remote end answered 500, or a variable service: evaluated all the same
    return bool(_Recorder.hits)


def flags(text: str, host: str, keyword: str = "SERVICE") -> bool:
    """Does the scan name a remote resource on ``host`` (or one it cannot tell)?"""
    return any(r.keyword == keyword and (r.iri is None or host_of(r.iri) == host) for r in scan(text).remotes)


R = "http://HOST/x"
# (text, what Oxigraph does: "fetch", "none" or "error"); HOST is the recording server
QUERIES = [
    # the issue's bypass: an escaped '#' in a prefixed name is no comment
    (f"PREFIX ex: <urn:ex:> SELECT * WHERE {{ OPTIONAL {{ ?x ex:a\\# ?y }} SERVICE <{R}> {{ ?s ?p ?o }} }} LIMIT 1", "fetch"),
    (f"PREFIX ex: <urn:ex:> SELECT * WHERE {{ OPTIONAL {{ ?x ex:a\\' ?y }} SERVICE <{R}> {{ }} }} # '", "fetch"),
    (f"PREFIX ex: <urn:ex:> SELECT * WHERE {{ OPTIONAL {{ ?x ex:a\\\" ?y }} SERVICE <{R}> {{ }} }}", "error"),
    (f"SELECT * WHERE {{ SERVICE <{R}> {{}} }}", "fetch"),
    (f"select * where {{ service silent <{R}> {{}} }}", "fetch"),
    (f"SELECT * WHERE {{ SeRvIcE<{R}>{{}} }}", "fetch"),
    (f"SELECT * WHERE {{ SERVICESILENT<{R}> {{}} }}", "fetch"),
    (f"SELECT * WHERE {{ SERVICE#comment\n<{R}>{{}} }}", "fetch"),
    (f"SELECT * WHERE {{ SERVICE\r<{R}>\t{{}} }}", "fetch"),
    ("PREFIX : <http://HOST/> SELECT * WHERE { SERVICE:x {} }", "fetch"),
    ("PREFIX e: <http://HOST/> SELECT * WHERE { SERVICE e:x {} }", "fetch"),
    ("PREFIX e: <http://HOST/> SELECT * WHERE { SERVICE e:a\\/b {} }", "fetch"),
    ("BASE <http://HOST/> SELECT * WHERE { SERVICE <x> {} }", "fetch"),
    ("BASE <http://elsewhere.invalid/> SELECT * WHERE { SERVICE <//HOST/x> {} }", "fetch"),
    (f"SELECT * WHERE {{ BIND(1 AS ?x)SERVICE<{R}> {{}} }}", "fetch"),
    (f"SELECT * WHERE {{ FILTER(true)SERVICE<{R}> {{}} }}", "fetch"),
    (f"SELECT * WHERE {{ VALUES ?v {{ 1 }} ?s ?p 1SERVICE <{R}> {{}} }}", "fetch"),
    (f"SELECT * WHERE {{ {{ SELECT * WHERE {{ SERVICE <{R}> {{}} }} }} }}", "fetch"),
    (f"SELECT * WHERE {{ FILTER EXISTS {{ SERVICE <{R}> {{}} }} }}", "fetch"),
    (f"ASK {{ FILTER NOT EXISTS {{ SERVICE <{R}> {{}} }} }}", "fetch"),
    # '<' is an IRI, less-than, or the start of '<<': a string hiding behind the wrong reading
    (f"SELECT * WHERE {{ FILTER(1<2||'a>') SERVICE <{R}> {{}} FILTER('z') }} #'", "fetch"),
    (f"SELECT * WHERE {{ FILTER(1<=2||'a>') SERVICE <{R}> {{}} FILTER('z') }} #'", "fetch"),
    (f"SELECT * WHERE {{ BIND(1 AS ?o) FILTER(?o<?o||'a>') SERVICE <{R}> {{}} FILTER('z') }} #'", "fetch"),
    (f"SELECT * WHERE {{ <<?s?p'x>>'>> ?q ?r . SERVICE <{R}> {{}} FILTER('z') }} #'", "fetch"),
    (f"SELECT * WHERE {{ FILTER(1<<{R}>) SERVICE <{R}> {{}} }}", "fetch"),
    (f"SELECT (1<2 AS ?x) WHERE {{ SERVICE <{R}> {{}} }}", "fetch"),
    (f"SELECT * WHERE {{ FILTER(<<(<urn:a> <urn:b> 1)>><<urn:c>||'a>') SERVICE <{R}> {{}} FILTER('z') }} #'", "fetch"),
    (f"SELECT * WHERE {{ SERVICE <{R}> {{}} }} ORDER BY DESC(1<2)", "fetch"),
    # the word where Oxigraph sees none: strings, IRIs, comments, names, variables
    ("SELECT ?s WHERE { ?s ?p \"SERVICE <http://HOST/x> {}\" } # SERVICE <http://HOST/x> {}", "none"),
    ("SELECT * WHERE { ?s ?p '''SERVICE\n<http://HOST/x> {}''' }", "none"),
    ('SELECT * WHERE { ?s ?p """a""SERVICE <http://HOST/x> {}\\"""" }', "none"),
    ("SELECT * WHERE { ?s ?p <urn:x:SERVICE#SERVICE> }", "none"),
    ("PREFIX ex: <urn:ex:> SELECT * WHERE { ?s ex:SERVICE ?SERVICE }", "none"),
    ("SELECT * WHERE { ?s ?p \"x\\\" SERVICE <http://HOST/x> {} \" }", "none"),
    ("SELECT * WHERE { ?s ?p ?o } # \\u000a SERVICE <http://HOST/x> {}", "none"),
    ("SELECT * WHERE { ?s ?p \"\\u0022 SERVICE <http://HOST/x> {} \" }", "none"),
    # escapes a keyword never has; Unicode
    ("SELECT * WHERE { \\u0053ERVICE <http://HOST/x> {} }", "error"),
    ("SELECT * WHERE { SERVICE <http\\u003A//HOST/x> {} }", "fetch"),
    ("SELECT * WHERE { SERVICE <http://HOST/\\U0001F600> {} }", "fetch"),
    ("SELECT * WHERE { ?s ?p \"SERVİCE ſervice ＳＥＲＶＩＣＥ\" }", "none"),
    ("PREFIX é: <urn:e:> SELECT * WHERE { ?s é:SERVICE ?o }", "none"),
    # nested comments are not SPARQL: '/*' is no comment, '#' always is
    ("SELECT * WHERE { /* SERVICE <http://HOST/x> {} */ }", "error"),
    ("SELECT * WHERE { # /* \n SERVICE <http://HOST/x> {} # */\n }", "fetch"),
    # a variable service: refused whatever it would reach
    ("SELECT * WHERE { VALUES ?v { <http://HOST/x> } SERVICE ?v {} }", "none"),
]
UPDATES = [
    ("LOAD <http://HOST/data.ttl>", "fetch"),
    ("load silent <http://HOST/data.ttl> into graph <urn:g>", "fetch"),
    ("PREFIX r: <http://HOST/> LOAD r:data.ttl", "fetch"),
    ("INSERT DATA { <urn:a> <urn:b> \"x\" } ; LOAD <http://HOST/data.ttl>", "fetch"),
    ("INSERT DATA { <urn:a> <urn:b> \"LOAD <http://HOST/data.ttl>\" }", "none"),
    ("INSERT { <urn:a> <urn:b> 1 } WHERE { SERVICE <http://HOST/x> {} }", "fetch"),
    ("PREFIX download: <urn:x:> INSERT DATA { download:a download:b download:c }", "none"),
]


def _fill(text: str, host: str) -> str:
    return text.replace("HOST", host)


@pytest.mark.parametrize("text,expected", QUERIES, ids=[f"q{i}" for i in range(len(QUERIES))])
def test_hostile_queries_are_read_as_oxigraph_reads_them(remote, text, expected):
    text = _fill(text, remote)
    got = oxigraph_fetches(text)
    assert {True: "fetch", False: "none", None: "error"}[got] == expected, "the table is wrong about Oxigraph"
    try:
        flagged = flags(text, remote)
    except QueryError:
        assert got is None, "the scanner refuses a text Oxigraph runs"
        return
    if got:
        assert flagged
    elif got is False:
        assert flagged == ("SERVICE ?v" in text)       # a variable service is refused all the same


@pytest.mark.parametrize("text,expected", UPDATES, ids=[f"u{i}" for i in range(len(UPDATES))])
def test_hostile_updates(remote, text, expected):
    text = _fill(text, remote)
    got = oxigraph_fetches(text, update=True)
    assert {True: "fetch", False: "none", None: "error"}[got] == expected
    remotes = scan(text).remotes
    assert scan(text).form == "update"
    if got:
        assert any(r.iri is None or host_of(r.iri) == remote for r in remotes)
    else:
        assert remotes == ()


def test_targets_are_resolved_and_located():
    s = scan("PREFIX e: <http://h.example/> BASE <http://b.example/a/>\nSELECT * WHERE {\n"
             "  SERVICE SILENT e:x\\/y {} SERVICE <../z> {} SERVICE ?v {} }")
    assert s.form == "query"
    assert [(r.iri, r.line) for r in s.remotes] == [("http://h.example/x/y", 3), ("http://b.example/z", 3), (None, 3)]
    assert [r.column for r in s.remotes] == [3, 28, 46]
    assert scan("LOAD <http://x.example/d.ttl> INTO GRAPH <urn:g>").remotes[0].iri == "http://x.example/d.ttl"
    assert scan("PREFIX a: <urn:a:> ASK {}").form == "query"
    assert scan("  # comment\nDROP GRAPH <urn:g>").is_update
    assert scan("nonsense").form == ""


def test_hosts_are_told_only_when_plain():
    assert host_of("http://Example.org:8080/sparql") == "example.org:8080"
    assert host_of("https://[::1]/x") == "[::1]"
    for iri in ("file:///etc/passwd", "http://allowed.example@127.0.0.1/", "http://127.0.0.1\\@allowed.example/",
                "http://%31%32%37.0.0.1/", "http:127.0.0.1/x", "ftp://example.org/", "http://[::1/x", "http://exämple.org/"):
        assert host_of(iri) is None, iri


def test_unclosed_strings_and_deep_brackets_are_refused():
    with pytest.raises(QueryError, match="1:24: a string opened here is never closed"):
        scan('SELECT * WHERE { ?s ?p "' + '\\"' * 20_000 + " SERVICE")
    assert scan('SELECT * WHERE { ?s ?p "' + '\\"' * 20_000).form == "query"      # no keyword to hide: the parser says
    with pytest.raises(QueryError, match="nested deeper"):
        scan("SELECT * WHERE { FILTER" + "(" * (MAX_DEPTH + 5) + "1" + ")" * (MAX_DEPTH + 5) + " }")
    assert scan("SELECT * WHERE { FILTER" + "(" * 100 + "1" + ")" * 100 + " }").form == "query"


def test_huge_literals_and_many_keywords_are_read_in_one_pass():
    big = "x" * 2_000_000
    assert scan(f'SELECT * WHERE {{ ?s ?p "{big}" }}').remotes == ()
    assert scan(f'SELECT * WHERE {{ ?s ?p """{big}SERVICE <http://a.example/> {{}}""" }}').remotes == ()
    many = scan("SELECT * WHERE { " + "SERVICE <http://a.example/> {} " * 10_000 + "}").remotes
    assert len(many) == 65 and many[-1].iri is None and {r.iri for r in many[:64]} == {"http://a.example/"}


FRAGMENTS = ["SERVICE", " ", "\n", "<http://HOST/x>", "{", "}", "(", ")", "'", '"', "'''", '"""', "#", "\\", "ex:a\\#",
             "ex:a\\'", "<", ">", "<<", ">>", "<=", "||", "FILTER", "BIND", "AS", "?o", "1", "true", ".", ";", "OPTIONAL",
             "SELECT", "WHERE", "<urn:a#'>", "'a>'", "^^", "@en", "_:b", ":", "e:", "SILENT"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=st.lists(st.sampled_from(FRAGMENTS), max_size=7), after=st.lists(st.sampled_from(FRAGMENTS), max_size=5))
def test_no_arrangement_of_fragments_hides_a_service_oxigraph_calls(remote, before, after):
    text = _fill("PREFIX ex: <urn:ex:> PREFIX e: <http://HOST/> SELECT * WHERE { BIND(1 AS ?o) " + "".join(before)
                 + " SERVICE <http://HOST/x> {} " + "".join(after) + " }", remote)
    if not oxigraph_fetches(text):
        return
    try:
        assert flags(text, remote), text
    except QueryError:
        pytest.fail(f"the scanner refuses a text Oxigraph runs: {text!r}")


# -- queries that cannot be slow (answered by diagkg serve without a worker) --------------------

QUICK = [
    "ASK { ?s ?p ?o }", "ASK {}", "ask where { ?s ?p ?o . }", "ASK { ?s ?p _:b }", "ASK { ?s ?p 5 }",
    'ASK { ?s ?p "x"@en }', 'ASK { ?s ?p "x"^^<urn:t> }', "SELECT * WHERE { ?s ?p ?o } LIMIT 10",
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> SELECT ?l { ?s rdfs:label ?l } LIMIT 1000",
    "BASE <urn:x:> SELECT ?l { <a> a ?l } LIMIT 5", "ASK { ?s ?p ?o } # a comment, not a keyword: LIMIT",
]
NOT_QUICK = [
    "ASK { ?x ?x ?x }",                                          # a repeated variable scans the store
    "ASK { _:b ?p _:b }", "SELECT * WHERE { ?s ?p ?o }",         # no LIMIT: the whole store
    "SELECT * { ?s ?p ?o } LIMIT 1001", "SELECT ?s { ?s ?p ?o } LIMIT 5 OFFSET 100000",
    "SELECT DISTINCT ?p { ?s ?p ?o } LIMIT 5", "SELECT REDUCED ?p { ?s ?p ?o } LIMIT 5",
    "ASK { ?s ?p ?o . ?o ?q ?r }", "ASK { ?s ?p ?o ; ?q ?r }", "ASK { ?s ?p ?o , ?r }",
    "SELECT ?l { ?s <urn:p>* ?l } LIMIT 5", "ASK { ?s <urn:p>/<urn:q> ?o }", "ASK { ?s ^<urn:p> ?o }",
    "ASK { ?s ?p ?o FILTER(?o) }", "ASK { OPTIONAL { ?s ?p ?o } }", "ASK { GRAPH ?g { ?s ?p ?o } }",
    "ASK { SERVICE <http://x/> { ?s ?p ?o } }", "ASK { ?s SERVICE:x ?o }", "ASK { << ?a ?b ?c >> ?p ?o }",
    "SELECT (COUNT(*) AS ?n) { ?s ?p ?o } LIMIT 1", "ASK { ?s ?p -5 }", "ASK { ?s ?p ?o } LIMIT 1",
    "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 1", "DESCRIBE <urn:x>", "INSERT DATA { <a> <b> <c> }",
    "ASK FROM <urn:g> { ?s ?p ?o }", "ASK { ?s ?p ?o } VALUES ?s { <a> }", "ASK { ?s ?p", 'ASK { ?s ?p "open }',
    "ASK { ?s ?p ?o }" + " " * 5000,
]


@pytest.mark.parametrize("text", QUICK)
def test_quick_queries(text):
    assert is_quick(text)
    ox.Store().query(text)          # and SPARQL that Oxigraph runs


@pytest.mark.parametrize("text", NOT_QUICK)
def test_queries_that_are_not_quick(text):
    assert not is_quick(text)


# whether a text states its own dataset: told without the scanner where no "from" can be the keyword
DATASETS = [
    ("SELECT * FROM <urn:g> WHERE { ?s ?p ?o }", True),
    ("SELECT * from<urn:g> { ?s ?p ?o }", True),
    ("SELECT * FROM NAMED <urn:g> { GRAPH ?g { ?s ?p ?o } }", True),
    ("PREFIX ex: <urn:x#>\nSELECT * FROM ex:g { ?s ?p ?o }", True),
    ("SELECT * # the parts, from the store\nWHERE { ?s ?p ?o }", False),
    ("SELECT ?from WHERE { ?e <urn:fromNode> ?from }", False),
    ("PREFIX dk: <urn:dk#>\nSELECT * { ?e dk:fromNode ?n ; dk:from ?m }", False),
    ("PREFIX ex: <urn:x#>\nSELECT * { ?s ex:a.from ?o }", False),
    ("SELECT * { ?s ?p '# not a comment' } # from here", False),
    ("SELECT * { ?s ?p <urn:a#b> } FROM <urn:g>", True),            # a '#' in an IRI before it
    ("SELECT * { ?s ?p \"a#\" } FROM <urn:g>", True),               # in a string
    ("PREFIX ex: <urn:x#>\nDESCRIBE ex:a\\# FROM <urn:g>", True),   # an escaped '#' in a name
    ('SELECT * { ?s ?p """x\n#""" } FROM <urn:g>', True),           # a string that began on a line above
    ("SELECT * { ?s ?p ?o } # FROM <urn:g>", False),
    ("SELECT * # it's the store's, not from <urn:g>\nWHERE { ?s ?p ?o }", False),
    ('SELECT * { ?s ?p """a\n# x""" } FROM <urn:g>', True),          # a '#' inside a long string
    ("SELECT * { ?s ?p '''a\n#''' } FROM <urn:g>", True),
    ("SELECT * FROM", True),                                        # not SPARQL (the engine says so), but a FROM
]


@pytest.mark.parametrize(("text", "named"), DATASETS)
def test_a_query_names_its_dataset_as_the_scanner_tells(text: str, named: bool) -> None:
    from diagkg.kg.sparql_scan import names_dataset

    assert names_dataset(text) is named
    try:
        assert scan(text).dataset is named
    except QueryError:
        assert not named


def test_no_shipped_query_needs_the_scanner_to_tell_its_dataset() -> None:
    """Compiling the scanner's patterns is ~25 ms of a process: the shipped queries, whose comments say "from",
    are told without it (in a process of its own, where nothing has compiled them yet)."""
    import subprocess
    import sys

    code = ("from diagkg.kg.queries import library\n"
            "from diagkg.kg.sparql_scan import _patterns, names_dataset\n"
            "lib = library()\n"
            "texts = [q.text for q in (lib.get(n) for n in lib.names()) if not q.is_update]\n"
            "assert len(texts) > 50, len(texts)\n"
            "assert not any(names_dataset(t) for t in texts)\n"
            "print(_patterns.cache_info().currsize)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0", out.stdout + out.stderr
