"""``python -m olboost.sweep ARGS``: the same as ``olboost sweep ARGS``."""

import sys

from olboost.cli import main

sys.exit(main(["sweep", *sys.argv[1:]]))
