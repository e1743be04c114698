"""sjoin_nearest: GeoPandas' nearest join, in metres on the sphere."""

import numpy as np

from ._neighbors import NearestNeighbors


def sjoin_nearest(left_df, right_df, how="left", max_distance=None, lsuffix="left", rsuffix="right",
                  distance_col=None, engine="auto", gpus=0):
    """Joins to every point of left_df the attributes of the nearest point
    of right_df, as geopandas.sjoin_nearest does, but by great-circle
    distance in metres (GeoPandas measures planar distances in CRS units).

    Both frames hold point geometries in longitude/latitude degrees
    (EPSG:4326 or OGC:CRS84; other CRSs are refused). how is "left" (every
    left row; NaN where no right point lies within max_distance metres) or
    "inner" (only the matched rows). The right frame's index goes to the
    column index_{rsuffix}; columns in both frames get the suffixes;
    distance_col, if given, receives the distance in metres. Where two right
    points are equally near, the one first in right_df is joined (GeoPandas
    joins both).
    """
    import geopandas
    import pandas as pd

    if how not in ("left", "inner"):
        raise ValueError(f"how={how!r}: want 'left' or 'inner'")
    for name, df in (("left_df", left_df), ("right_df", right_df)):
        if not isinstance(df, geopandas.GeoDataFrame):
            raise TypeError(f"{name}: want a GeoDataFrame, got {type(df).__name__}")
    nn = NearestNeighbors(n_neighbors=1, engine=engine, gpus=gpus).fit(right_df)
    dist, idx = nn.kneighbors(left_df, n_neighbors=1, max_distance=max_distance)
    dist, idx = dist[:, 0], idx[:, 0]
    found = idx >= 0
    left, right = _suffixed(left_df, right_df.drop(columns=right_df.geometry.name), lsuffix, rsuffix)
    right.insert(0, f"index_{rsuffix}", right_df.index)
    taken = right.iloc[np.where(found, idx, 0)]
    taken = taken.where(pd.Series(found, index=taken.index), np.nan) if not found.all() else taken
    taken.index = left.index
    parts = [left, taken]
    if distance_col is not None:
        parts.append(pd.DataFrame({distance_col: np.where(found, dist, np.nan)}, index=left.index))
    joined = geopandas.GeoDataFrame(pd.concat(parts, axis=1), geometry=left_df.geometry.name, crs=left_df.crs)
    return joined[found] if how == "inner" else joined


def _suffixed(left, right, lsuffix, rsuffix):
    """The frames with the columns they share suffixed."""
    common = set(left.columns) & set(right.columns)
    return (left.rename(columns={c: f"{c}_{lsuffix}" for c in common}),
            right.rename(columns={c: f"{c}_{rsuffix}" for c in common}))
