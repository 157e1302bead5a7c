"""`python -m conformance.cli ...`: the `turnspec` command."""

import sys

from . import main

if __name__ == "__main__":  # importing this module (pkgutil.walk_packages) runs nothing
    sys.exit(main())
