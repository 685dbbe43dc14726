"""``python -m diagkg.cli``: the same as the ``diagkg`` command."""

import sys

from . import main

sys.exit(main())
