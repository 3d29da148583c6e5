"""The conversion passes, in the order they run.

Each pass takes the shared ``Context`` and returns a ``PassResult`` (whether it
changed the model, entries, refusals). Planning passes only record rewrites; the
model changes only when nothing was refused, in the finishing passes.

Each pass states its contract: ``requires``, what earlier passes must have ensured
before it runs, and ``ensures``, what it leaves done. ``run._run`` holds every pass to
it, so a pass list in the wrong order fails at once instead of converting wrongly.
"""

from __future__ import annotations

from .apply import ApplyRewrites
from .format import PlanFormat
from .imports import FixImports
from .ir import ChooseIR
from .other_ops import PlanOtherOps
from .prove import Prove
from .qdq import PlanQDQ
from .read import ReadModel
from .shift import PlanShift
from .symmetric import PlanSymmetric
from .unify import Unify
from .weights import PlanWeights

PLAN = (ReadModel(), PlanFormat(), PlanWeights(), PlanShift(), PlanSymmetric(), PlanQDQ(), PlanOtherOps(),
        Unify(), Prove())
FINISH = (ApplyRewrites(), FixImports(), ChooseIR())

__all__ = ["FINISH", "PLAN"]
