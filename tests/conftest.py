import sys

from paths import FIXTURES, ROOT

for p in (ROOT, FIXTURES):
    if p not in sys.path:
        sys.path.insert(0, p)
