"""The inference cache: processes reasoning over the same system description at once (a
campaign's workers, a test run's) reason once; the others wait and read what it kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..support.torch import TORCH

CHILD = r"""
import sys, time
import rdflib
from diagkg.kg import reasoning, inference_cache

real = reasoning.reason
def slow(*args, **kw):          # a reasoner slow enough that two processes overlap
    print("reasoned", flush=True)
    time.sleep(1.5)
    return real(*args, **kw)
reasoning.reason = slow
data = rdflib.Graph().parse(sys.argv[1], format="turtle")
triples = inference_cache.inferred_triples(data, "digest-of-the-torch", engine="owlrl")
print(len(triples), flush=True)
"""


def test_two_processes_reason_over_one_description_once(tmp_path: Path):
    (tmp_path / "torch.ttl").write_text(TORCH)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    children = [subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "torch.ttl")], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = [c.communicate(timeout=120) for c in children]
    assert all(c.returncode == 0 for c in children), [err for _, err in outs]
    lines = [out.split() for out, _ in outs]
    assert sum(words.count("reasoned") for words in lines) == 1, lines      # one reasoned, the other read
    assert len({words[-1] for words in lines}) == 1 and int(lines[0][-1]) > 0
    assert (tmp_path / "cache" / "diagkg" / "inferred" / "digest-of-the-torch.nt").is_file()
