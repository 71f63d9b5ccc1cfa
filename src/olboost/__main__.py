import sys

from olboost.cli import main

sys.exit(main())
