"""The console project package."""

import os

# Our processes run many small matrix products at once (recall's embedder, the worldbook's
# vectors) on a few shared cores: BLAS threads spinning for each product cost far more
# than they give (an 8x384 by 384x1152 product took 8 ms with them, 0.3 ms without). Set
# before numpy loads; an operator's own setting wins. The same holds for the OpenMP threads
# of the e5 embedder's engine (``console.embedding.e5``), which OpenMP reads once, when it
# loads: a query took 45 ms with two threads on two busy cores, 19 ms with one.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
