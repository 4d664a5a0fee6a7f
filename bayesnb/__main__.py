"""``python -m bayesnb``: the command line of :mod:`bayesnb.cli`, as the ``bayesnb`` script.

Run as a module, ``python -m bayesnb compare titanic`` is ``bayesnb compare titanic``: the same
parser, messages and exit statuses, for environments where the script is not on ``PATH``.
"""

import sys

from .cli import main

if __name__ == "__main__":  # importing the module (pkgutil.walk_packages, say) runs nothing
    sys.exit(main())
