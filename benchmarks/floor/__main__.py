"""`python -m benchmarks.floor`: see benchmarks/floor/run.py."""

import sys

from benchmarks.floor.run import main

if __name__ == "__main__":
    sys.exit(main())
