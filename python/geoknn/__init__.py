"""geoknn: exact great-circle nearest neighbours for NumPy, pandas and
GeoPandas users, answered by the knn engine (all CPU cores, or the GPUs).

    >>> import geoknn
    >>> nn = geoknn.NearestNeighbors(n_neighbors=2).fit([[48.85, 2.35], [51.51, -0.13], [52.52, 13.40]])
    >>> dist_m, idx = nn.kneighbors([[50.0, 4.0]])

Points are [latitude, longitude] in degrees, distances in metres; see
NearestNeighbors and sjoin_nearest.
"""

from ._neighbors import EARTH_RADIUS_METRES, NearestNeighbors
from .client import Client, ServerError
from ._sjoin import sjoin_nearest
from ._worker import WorkerError

__all__ = ["NearestNeighbors", "Client", "ServerError", "sjoin_nearest", "WorkerError", "EARTH_RADIUS_METRES"]
__version__ = "0.1.0"
