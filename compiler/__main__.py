"""`python -m carve ...` is the `carve` command line."""

from carve.cli import main

raise SystemExit(main())
