"""Checks shared by the smooth-region tests (``test_regions_smooth``, ``test_regions_axes``)."""

import numpy as np

from jointlimit_addon.core import projection


def geodesic(a, b):
    """Angle between unit vectors, exact for tiny angles."""
    return 2.0 * np.arctan2(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))


def plane_excess(region, P):
    """Upper bound of the plane distance of points from the region (0 inside): the distance to
    the simple correction, which lies on the outline."""
    s, t = projection.sphere_to_plane(P)
    sm, tm = region.clamp_simple(s, t)
    return np.hypot(s - sm, t - tm)


def dense_nearest(region, P, n):
    """Brute force: geodesic distance from each point to the nearest of ``n`` outline samples
    (picked by the largest dot product, measured exactly)."""
    B = region.boundary_points_sphere(n)
    return geodesic(P, B[np.argmax(P @ B.T, axis=1)])


def assert_optimal_properties(region, P, dense):
    """OPTIMAL on points ``P``: finite, unit, inside (1e-9 on the plane), inside points unchanged,
    idempotent, no farther than any of ``dense`` outline samples, no farther than SIMPLE
    [000 §4.1]."""
    out = region.clamp_optimal(P)
    assert np.all(np.isfinite(out))
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-12)
    assert np.all(region.contains_sphere(out))
    assert plane_excess(region, out).max() <= 1e-9
    inside = region.contains_sphere(P)
    assert np.array_equal(out[inside], P[inside])
    assert np.abs(region.clamp_optimal(out) - out).max() <= 1e-12
    d_opt = geodesic(P, out)
    assert np.all(d_opt <= dense_nearest(region, P, dense) + 1e-9)
    s, t = projection.sphere_to_plane(P)
    ok = np.isfinite(s)
    sm, tm = region.clamp_simple(s[ok], t[ok])
    assert np.all(d_opt[ok] <= geodesic(P[ok], projection.plane_to_sphere(sm, tm)) + 1e-12)
