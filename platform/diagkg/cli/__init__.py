"""The ``diagkg`` command line: :func:`diagkg.cli.main.main` parses the arguments and runs a
subcommand; one module per group of subcommands (``check``, ``knowledge``, ``sessions``,
``evaluate``, ``serve``…). This package's ``__init__`` imports nothing, so that no module of it
takes part in an import cycle through the package."""
