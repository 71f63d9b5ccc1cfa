"""``python -m olboost.cli``: the ``olboost`` command, as ``python -m olboost`` is."""

import sys

from olboost.cli import main

sys.exit(main())
