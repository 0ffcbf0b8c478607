import sys

from elderbench.cli import main

sys.exit(main())
