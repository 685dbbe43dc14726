"""``python -m diagkg.cli``: the same as the ``diagkg`` command."""

import sys

from .main import main

sys.exit(main())
